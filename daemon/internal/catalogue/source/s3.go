package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// DefaultRegion is the region requests are signed for when the default
// chain configures none, as garm-catalogue publish does.
const DefaultRegion = "us-east-1"

// s3Source is one object in an S3-compatible store.
type s3Source struct {
	client      *s3.Client
	bucket, key string
	// limit is the largest artifact fetched: artifact.MaxSize, smaller in
	// tests.
	limit int64
}

func (s *s3Source) String() string { return "s3://" + s.bucket + "/" + s.key }

// openS3 builds the client from the default chain. A custom base endpoint
// (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3, endpoint_url in the shared config)
// means an S3-compatible store, which generally serves buckets by path
// rather than by host name.
func openS3(ctx context.Context, bucket, key string, limit int64) (*s3Source, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithDefaultRegion(DefaultRegion))
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: loading the AWS configuration: %w", bucket, key, err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &s3Source{client: client, bucket: bucket, key: key, limit: limit}, nil
}

func (s *s3Source) Head(ctx context.Context) (string, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key)})
	if err != nil {
		return "", fmt.Errorf("%s: HEAD: %s%w", s, explain(err), notExist(err))
	}
	etag := unquote(aws.ToString(out.ETag))
	if etag == "" {
		return "", fmt.Errorf("%s: HEAD: the store sent no ETag", s)
	}
	return etag, nil
}

// Fetch refuses an object the store says is too large before reading its
// body, and stops reading one that turns out larger than it said.
func (s *s3Source) Fetch(ctx context.Context) ([]byte, string, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key)})
	if err != nil {
		return nil, "", fmt.Errorf("%s: GET: %s%w", s, explain(err), notExist(err))
	}
	defer out.Body.Close()
	size := aws.ToInt64(out.ContentLength)
	if size > s.limit {
		return nil, "", &TooLargeError{Location: s.String(), Size: size, Limit: s.limit}
	}
	var buf bytes.Buffer
	if size > 0 {
		buf.Grow(int(size))
	}
	if _, err := buf.ReadFrom(io.LimitReader(out.Body, s.limit+1)); err != nil {
		return nil, "", fmt.Errorf("%s: reading the object: %w", s, err)
	}
	if int64(buf.Len()) > s.limit {
		return nil, "", &TooLargeError{Location: s.String(), Size: -1, Limit: s.limit}
	}
	return buf.Bytes(), unquote(aws.ToString(out.ETag)), nil
}

// unquote strips the quotes S3 puts around an ETag.
func unquote(etag string) string { return strings.Trim(etag, `"`) }

// notExist adds fs.ErrNotExist to the store's answer that the object does
// not exist, as a missing file's error carries it, so a caller tells "no
// such object" from a store it cannot reach the same way for both.
func notExist(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "NotFound") {
		return fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	}
	return err
}

// explain puts the store's most common refusals in plain words before the
// SDK's own message.
func explain(err error) string {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return ""
	}
	switch apiErr.ErrorCode() {
	case "NoSuchKey", "NotFound":
		return "no such object: "
	case "NoSuchBucket":
		return "the bucket does not exist: "
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken",
		"XAdminUserNotFound": // versitygw's code for an unknown access key
		return "the store refused the credentials: "
	case "AccessDenied", "Forbidden":
		return "access denied: "
	}
	return ""
}
