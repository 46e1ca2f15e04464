// Package publish is the last step of `garm-catalogue publish`: it uploads a built catalogue
// artifact to one S3 object (and, when it is signed, its signatures to a second one beside it)
// and reports the artifact's digest and the ETag the store gave it.
//
// It owns reading the s3://bucket/key target ([ParseURL]) and the PutObject that writes
// it ([Publish]). The object is stored with the content type [ContentType], the digest in the
// user metadata under [DigestMetadataKey], and the artifact's SHA-256 as the request's checksum,
// so the store itself refuses bytes that were damaged on the way. [PublishSigned] uploads a
// signed artifact and then its signature envelope beside it ([EnvelopeTarget], content type
// [EnvelopeContentType]): artifact first, envelope last, the order docs/decisions/0133 fixes
// so that a verifying reader takes a half-finished publication for "not yet".
//
// Configuration is the AWS SDK's default chain and nothing else: credentials, profile and region
// come from the environment and the shared config files as for any AWS tool. When that chain
// names a custom base endpoint (AWS_ENDPOINT_URL, or AWS_ENDPOINT_URL_S3 for S3 alone), the
// store is taken to be S3-compatible and addressed path-style (endpoint/bucket/key), which such
// stores serve without wildcard DNS. When no region is configured, requests are signed for
// [DefaultRegion]: a signature needs some region, and compatible stores generally ignore it
// (AWS itself refuses a request signed for the wrong region, so set AWS_REGION there).
//
// It refuses targets that cannot be an object: another scheme, a missing or invalid bucket name,
// a missing key or one ending in "/", and URL parts S3 object names do not have (user
// information, a port, a query, a fragment). A port belongs in AWS_ENDPOINT_URL, not in the
// target. Refusal messages are fixed sentences that never repeat the URL, which could carry a
// secret in its user information.
//
// Deliberately not here: building or checking the artifact (the caller publishes exactly the
// bytes it was given), multipart upload (artifacts are small), retries beyond the SDK's own, and
// timeouts (the caller's context bounds the upload). Reading a catalogue back from S3 is garmd's
// business.
package publish
