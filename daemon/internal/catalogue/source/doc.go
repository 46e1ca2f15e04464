// Package source fetches garmd's catalogue artifact from where the operator
// keeps it: a file path, or one object in an S3-compatible store
// (s3://bucket/key). A Source answers two questions: what version of the
// artifact is there now (Head, an ETag — for a file, a fingerprint of its
// size and modification time), and what are its bytes (Fetch, with the
// ETag they came with).
//
// Fetch refuses an artifact larger than artifact.MaxSize, the same ceiling
// the catalogue reader applies, before reading it when the store says how
// large it is and while reading it otherwise: a store cannot make garmd hold
// more than one ceiling's worth of bytes. An s3:// URL is refused unless it
// names exactly one object: no port, query, fragment or user information
// (a URL with user information may carry a secret, so no refusal echoes it).
//
// Why: the store is reached through the AWS SDK's default credential chain,
// exactly as an operator configures every other AWS client — environment,
// shared files, instance or container roles — so garmd has no credential
// flag of its own. AWS_ENDPOINT_URL points it at an S3-compatible store,
// which is then addressed by path, and checksums are computed and checked
// only when the operation requires them, because such stores often send
// none.
//
// Deliberately not here: deciding whether fetched bytes are a new catalogue
// (the digest decides, in garmd's reloader), loading or mounting them
// (package catalogue), polling, and retrying beyond what the SDK does for
// one request.
package source
