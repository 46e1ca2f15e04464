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
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
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

// The refusals of [ParseURL] and of a [Target] that [Publish] cannot use. They never echo the
// URL: a URL with userinfo may carry a secret.
var (
	errNotS3URL   = errors.New("s3 URL: want s3://bucket/key")
	errScheme     = errors.New("s3 URL: the scheme must be s3")
	errUserinfo   = errors.New("s3 URL: user information (user@ or user:password@) is not allowed")
	errPort       = errors.New("s3 URL: a port is not allowed; set AWS_ENDPOINT_URL to use another store")
	errQuery      = errors.New("s3 URL: a query (?...) is not allowed")
	errFragment   = errors.New("s3 URL: a fragment (#...) is not allowed")
	errNoBucket   = errors.New("s3 URL: the bucket is missing")
	errBucketName = errors.New("s3 URL: the bucket is not a valid S3 bucket name " +
		"(3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)")
	errNoKey      = errors.New("s3 URL: the key is missing")
	errKeyIsDir   = errors.New("s3 URL: the key ends in /, which names a folder, not an object")
	errKeyInvalid = errors.New("s3 URL: the key must be valid UTF-8 of at most 1024 bytes")
)

// ParseURL reads "s3://bucket/key". The key is everything after the bucket's slash, taken
// literally (no percent-decoding), and must name an object.
func ParseURL(raw string) (Target, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Target{}, errNotS3URL
	}
	if scheme != "s3" {
		return Target{}, errScheme
	}
	if strings.Contains(rest, "?") {
		return Target{}, errQuery
	}
	if strings.Contains(rest, "#") {
		return Target{}, errFragment
	}
	authority, key, hasSlash := strings.Cut(rest, "/")
	if strings.Contains(authority, "@") {
		return Target{}, errUserinfo
	}
	if strings.Contains(authority, ":") {
		return Target{}, errPort
	}
	if authority == "" {
		return Target{}, errNoBucket
	}
	if !hasSlash {
		return Target{}, errNoKey
	}
	target := Target{Bucket: authority, Key: key}
	if err := target.validate(); err != nil {
		return Target{}, err
	}
	return target, nil
}

func (t Target) validate() error {
	if t.Bucket == "" {
		return errNoBucket
	}
	if !validBucketName(t.Bucket) {
		return errBucketName
	}
	if t.Key == "" {
		return errNoKey
	}
	if strings.HasSuffix(t.Key, "/") {
		return errKeyIsDir
	}
	if len(t.Key) > maxKeyBytes || !utf8.ValidString(t.Key) {
		return errKeyInvalid
	}
	return nil
}

// validBucketName applies S3's general-purpose bucket naming rules that a URL can get wrong:
// 3–63 characters of lowercase letters, digits, dots and hyphens, starting and ending with a
// letter or digit.
func validBucketName(name string) bool {
	if len(name) < 3 || len(name) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	for i := 0; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '-' {
			return false
		}
	}
	return alnum(name[0]) && alnum(name[len(name)-1])
}

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
