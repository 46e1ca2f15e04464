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

	sum := sha256.Sum256(artifact)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	out, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:            aws.String(target.Bucket),
		Key:               aws.String(target.Key),
		Body:              bytes.NewReader(artifact), // an io.ReadSeeker: the SDK can sign and retry it
		ContentLength:     aws.Int64(int64(len(artifact))),
		ContentType:       aws.String(ContentType),
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
		Size:   int64(len(artifact)),
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
