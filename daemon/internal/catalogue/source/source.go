package source

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
)

// Source is where a catalogue artifact is read from.
type Source interface {
	// Head is the current ETag of the artifact (for a file: a fingerprint
	// of size and mtime).
	Head(ctx context.Context) (etag string, err error)
	// Fetch reads the artifact's bytes (bounded by artifact.MaxSize,
	// refused beyond it) and the ETag they came with. Head and Fetch of an
	// object or file that does not exist answer an error wrapping
	// fs.ErrNotExist.
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

// ParseS3URL reads "s3://bucket/key" with artifact.ParseS3URL, the parser
// garm-catalogue publish writes with, so what the builder publishes to,
// garmd can read from.
func ParseS3URL(raw string) (bucket, key string, err error) { return artifact.ParseS3URL(raw) }
