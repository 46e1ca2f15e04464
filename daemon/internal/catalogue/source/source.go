package source

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
)

// Source is where a catalogue artifact is read from.
type Source interface {
	// Head is the current ETag of the artifact (for a file: a fingerprint
	// of size and mtime).
	Head(ctx context.Context) (etag string, err error)
	// Fetch reads the artifact's bytes (bounded by artifact.MaxSize,
	// refused beyond it) and the ETag they came with.
	Fetch(ctx context.Context) (data []byte, etag string, err error)
	// String is s3://bucket/key or the file path.
	String() string
}

// IsS3 reports whether location names an object in a store rather than a
// file.
func IsS3(location string) bool { return strings.HasPrefix(location, "s3://") }

// Open is the source at location: an s3:// URL, configured from the AWS
// SDK's default chain, or else a file path. Nothing is read yet.
func Open(ctx context.Context, location string) (Source, error) {
	if !IsS3(location) {
		return &fileSource{path: location}, nil
	}
	bucket, key, err := ParseS3URL(location)
	if err != nil {
		return nil, err
	}
	return openS3(ctx, bucket, key, artifact.MaxSize)
}

// TooLargeError is an artifact larger than the ceiling: fetching it again
// will not help until it changes.
type TooLargeError struct {
	Location string
	// Size is the artifact's size when the store said it, else -1 (it grew
	// past the ceiling while read).
	Size  int64
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s: the artifact is larger than the %d MiB ceiling", e.Location, e.Limit>>20)
	}
	return fmt.Sprintf("%s: the artifact is %d bytes, larger than the %d MiB ceiling", e.Location, e.Size, e.Limit>>20)
}

// fileSource is an artifact on the local file system.
type fileSource struct{ path string }

func (f *fileSource) String() string { return f.path }

func (f *fileSource) Head(context.Context) (string, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return "", err
	}
	return fingerprint(info), nil
}

// Fetch takes the fingerprint before reading, so a file that changes while
// it is read is seen as changed again by the next Head.
func (f *fileSource) Fetch(context.Context) ([]byte, string, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return nil, "", err
	}
	if info.Size() > artifact.MaxSize {
		return nil, "", &TooLargeError{Location: f.path, Size: info.Size(), Limit: artifact.MaxSize}
	}
	data, err := artifact.ReadFileData(f.path)
	if err != nil {
		return nil, "", err
	}
	return data, fingerprint(info), nil
}

func fingerprint(info os.FileInfo) string {
	return fmt.Sprintf("%d-%d", info.Size(), info.ModTime().UnixNano())
}

// The refusals of ParseS3URL. They never echo the URL: a URL with
// user information may carry a secret.
var (
	errNotS3URL   = errors.New("s3 URL: want s3://bucket/key")
	errUserinfo   = errors.New("s3 URL: user information (user@ or user:password@) is not allowed; credentials come from the AWS default chain")
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

// maxKeyBytes is S3's limit on an object key, in UTF-8 bytes.
const maxKeyBytes = 1024

// ParseS3URL reads "s3://bucket/key". The key is everything after the
// bucket's slash, taken literally (no percent-decoding), and must name an
// object. The rules are the ones garm-catalogue publish applies, so what
// the builder publishes to, garmd can read from.
func ParseS3URL(raw string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(raw, "s3://")
	if !ok {
		return "", "", errNotS3URL
	}
	authority, key, hasSlash := strings.Cut(rest, "/")
	switch {
	case strings.Contains(rest, "?"):
		return "", "", errQuery
	case strings.Contains(rest, "#"):
		return "", "", errFragment
	case strings.Contains(authority, "@"):
		return "", "", errUserinfo
	case strings.Contains(authority, ":"):
		return "", "", errPort
	case authority == "":
		return "", "", errNoBucket
	case !validBucketName(authority):
		return "", "", errBucketName
	case !hasSlash || key == "":
		return "", "", errNoKey
	case strings.HasSuffix(key, "/"):
		return "", "", errKeyIsDir
	case len(key) > maxKeyBytes || !utf8.ValidString(key):
		return "", "", errKeyInvalid
	}
	return authority, key, nil
}

// validBucketName applies S3's general-purpose bucket naming rules that a
// URL can get wrong.
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
