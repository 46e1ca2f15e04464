package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// ContentType is the media type a published catalogue artifact is stored with.
const ContentType = "application/vnd.garm.catalogue+protobuf"

// DigestMetadataKey is the user-metadata key (x-amz-meta-garm-digest on the wire) that carries
// the artifact's digest, so a reader can learn it without downloading the object.
const DigestMetadataKey = "garm-digest"

// DefaultRegion is the region requests are signed for when the default chain configures none.
const DefaultRegion = "us-east-1"

// maxKeyBytes is S3's limit on an object key, in UTF-8 bytes.
const maxKeyBytes = 1024

// Target is where an artifact goes: one object in one bucket.
type Target struct {
	Bucket string
	Key    string
}

// String is the target as an s3:// URL.
func (t Target) String() string { return "s3://" + t.Bucket + "/" + t.Key }

// Result is what the store holds after a publish.
type Result struct {
	Bucket string
	Key    string
	// Digest is "sha256:" and the lowercase hex SHA-256 of the artifact, the same digest
	// `garm-catalogue build` prints.
	Digest string
	// ETag is the store's entity tag for the object, without the surrounding quotes; garmd polls
	// it to notice a new catalogue.
	ETag string
	Size int64
}

// ParseURL reads "s3://bucket/key" with artifact.ParseS3URL, the parser
// garmd reads catalogues with.
func ParseURL(raw string) (Target, error) {
	bucket, key, err := artifact.ParseS3URL(raw)
	if err != nil {
		return Target{}, err
	}
	return Target{Bucket: bucket, Key: key}, nil
}

func (t Target) validate() error { return artifact.CheckS3Location(t.Bucket, t.Key) }

// Publish uploads artifact to target with one PutObject, configured by the AWS SDK's default
// chain, and returns what the store reports. It sets no timeout of its own: ctx bounds it.
func Publish(ctx context.Context, artifact []byte, target Target) (Result, error) {
	if err := target.validate(); err != nil {
		return Result{}, fmt.Errorf("publish %s: %w", target, err)
	}
	if len(artifact) == 0 {
		return Result{}, fmt.Errorf("publish %s: the artifact is empty", target)
	}
	client, err := newClient(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("publish %s: load AWS configuration: %w", target, err)
	}
	return put(ctx, client, artifact, target, ContentType)
}

// PublishSigned uploads artifact to target and then envelope, its signatures, to
// EnvelopeTarget(target): the artifact first and the envelope last, the order a reader's
// signature.ReadPair expects (docs/decisions/0133). When the artifact's upload fails, the
// envelope is not uploaded; when the envelope's fails, the artifact is in place under the old
// envelope, which a verifying reader takes for a publication not yet finished, and running
// publish again completes it.
func PublishSigned(ctx context.Context, artifact, envelope []byte, target Target) (art, env Result, err error) {
	envTarget := EnvelopeTarget(target)
	for _, t := range []Target{target, envTarget} {
		if err := t.validate(); err != nil {
			return Result{}, Result{}, fmt.Errorf("publish %s: %w", t, err)
		}
	}
	if len(artifact) == 0 || len(envelope) == 0 {
		return Result{}, Result{}, fmt.Errorf("publish %s: the artifact or its envelope is empty", target)
	}
	client, err := newClient(ctx)
	if err != nil {
		return Result{}, Result{}, fmt.Errorf("publish %s: load AWS configuration: %w", target, err)
	}
	if art, err = put(ctx, client, artifact, target, ContentType); err != nil {
		return Result{}, Result{}, fmt.Errorf("%w; the envelope was not uploaded", err)
	}
	if env, err = put(ctx, client, envelope, envTarget, EnvelopeContentType); err != nil {
		return art, Result{}, fmt.Errorf("%w; the artifact is uploaded but not its envelope: run publish again", err)
	}
	return art, env, nil
}

// EnvelopeContentType is the media type an artifact's signature envelope is stored with.
const EnvelopeContentType = "application/vnd.dsse.envelope.v1+json"

// EnvelopeTarget is where an artifact's envelope goes: the artifact's key with
// signature.EnvelopeSuffix.
func EnvelopeTarget(artifact Target) Target {
	return Target{Bucket: artifact.Bucket, Key: signature.EnvelopeLocation(artifact.Key)}
}

// put is one PutObject of body with its SHA-256 as the request's checksum and as the
// garm-digest metadata.
func put(ctx context.Context, client *s3.Client, body []byte, target Target, contentType string) (Result, error) {
	sum := sha256.Sum256(body)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	out, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:            aws.String(target.Bucket),
		Key:               aws.String(target.Key),
		Body:              bytes.NewReader(body), // an io.ReadSeeker: the SDK can sign and retry it
		ContentLength:     aws.Int64(int64(len(body))),
		ContentType:       aws.String(contentType),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		ChecksumSHA256:    aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		Metadata:          map[string]string{DigestMetadataKey: digest},
	})
	if err != nil {
		return Result{}, fmt.Errorf("publish %s: %s%w", target, explain(err), err)
	}
	return Result{
		Bucket: target.Bucket,
		Key:    target.Key,
		Digest: digest,
		ETag:   strings.Trim(aws.ToString(out.ETag), `"`),
		Size:   int64(len(body)),
	}, nil
}

// newClient builds the S3 client from the default chain. A custom base endpoint
// (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, or endpoint_url in the shared config) means an
// S3-compatible store, which generally serves buckets by path rather than by host name.
func newClient(ctx context.Context) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithDefaultRegion(DefaultRegion))
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	}), nil
}

// explain puts the store's most common refusals in plain words before the SDK's own message.
func explain(err error) string {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return ""
	}
	switch apiErr.ErrorCode() {
	case "NoSuchBucket":
		return "the bucket does not exist: "
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken",
		"XAdminUserNotFound": // versitygw's code for an unknown access key
		return "the store refused the credentials: "
	case "AccessDenied":
		return "access denied: "
	case "BadDigest", "XAmzContentChecksumMismatch", "InvalidDigest":
		return "the store received different bytes than were sent: "
	}
	return ""
}
