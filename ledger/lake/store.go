package lake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/garm-dev/garm/internal/atomicfile"
)

// Store is where a lake lives: an S3 bucket (Bucket) or, to read one that
// was copied, a local directory (Dir). Keys are relative to the lake's
// root and use "/".
type Store interface {
	// Put stores data under key whole: a reader sees all of it or nothing.
	Put(ctx context.Context, key string, data []byte) error
	// Get reads key; ok is false when there is no such object.
	Get(ctx context.Context, key string) (data []byte, ok bool, err error)
	// List names every object whose key starts with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// String names the store for messages.
	String() string
}

// Bucket is a lake in an S3-compatible store, under Prefix ("" or ending
// in "/").
type Bucket struct {
	Client *s3.Client
	Name   string
	Prefix string
}

// DefaultRegion is the region used when the AWS configuration names none.
const DefaultRegion = "us-east-1"

// OpenBucket is the lake at url (s3://bucket/prefix), with a client from
// the AWS SDK's default chain (AWS_ENDPOINT_URL and the credentials'
// variables, shared config, instance roles), as garmd's catalogue source
// builds its own. A custom endpoint means an S3-compatible store, which is
// addressed by path.
func OpenBucket(ctx context.Context, url string) (*Bucket, error) {
	rest, ok := strings.CutPrefix(url, "s3://")
	name, prefix, _ := strings.Cut(rest, "/")
	if !ok || name == "" {
		return nil, fmt.Errorf("%q is not s3://bucket/prefix", url)
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithDefaultRegion(DefaultRegion))
	if err != nil {
		return nil, fmt.Errorf("%s: loading the AWS configuration: %w", url, err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if o.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	})
	return &Bucket{Client: client, Name: name, Prefix: prefix}, nil
}

func (b *Bucket) String() string { return "s3://" + b.Name + "/" + b.Prefix }

// Put is one PutObject: S3 makes an object visible only once all of it is
// stored, so no reader ever sees part of a file under its name.
func (b *Bucket) Put(ctx context.Context, key string, data []byte) error {
	_, err := b.Client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.Name), Key: aws.String(b.Prefix + key),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data))),
	})
	if err != nil {
		return fmt.Errorf("%s%s: PUT: %w", b, key, err)
	}
	return nil
}

func (b *Bucket) Get(ctx context.Context, key string) ([]byte, bool, error) {
	out, err := b.Client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.Name), Key: aws.String(b.Prefix + key)})
	if err != nil {
		var missing *types.NoSuchKey
		if errors.As(err, &missing) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("%s%s: GET: %w", b, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, false, fmt.Errorf("%s%s: GET: %w", b, key, err)
	}
	return data, true, nil
}

func (b *Bucket) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.Client, &s3.ListObjectsV2Input{Bucket: aws.String(b.Name), Prefix: aws.String(b.Prefix + prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: LIST: %w", b, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, strings.TrimPrefix(aws.ToString(o.Key), b.Prefix))
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// Dir is a lake copied to a local directory (aws s3 sync, rclone), with
// the bucket's keys as paths.
type Dir string

func (d Dir) String() string { return string(d) }

// Put writes the file whole or not at all (internal/atomicfile), so a
// reader sees the whole file or none.
func (d Dir) Put(_ context.Context, key string, data []byte) error {
	path := filepath.Join(string(d), filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}

func (d Dir) Get(_ context.Context, key string) ([]byte, bool, error) {
	data, err := os.ReadFile(filepath.Join(string(d), filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

func (d Dir) List(_ context.Context, prefix string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(string(d), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(string(d), path)
		if key := filepath.ToSlash(rel); err == nil && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
		return err
	})
	sort.Strings(keys)
	return keys, err
}

var (
	_ Store = (*Bucket)(nil)
	_ Store = Dir("")
)
