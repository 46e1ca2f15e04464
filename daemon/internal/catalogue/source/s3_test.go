package source

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/devkit/s3test"
)

const testTimeout = 30 * time.Second

// store is a real versitygw with one bucket, the default chain pointed at
// it the way an operator would (AWS_ENDPOINT_URL and keys in the
// environment).
func store(t *testing.T) (*s3test.Server, *s3.Client) {
	t.Helper()
	srv := s3test.Start(t)
	srv.Env(t)
	srv.CreateBucket(t, "catalogues")
	return srv, srv.Client(t)
}

func put(t *testing.T, client *s3.Client, key string, data []byte) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("catalogues"), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		t.Fatal(err)
	}
	return unquote(aws.ToString(out.ETag))
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestAnS3SourceHeadsAndFetchesAndAChangedObjectChangesItsETag(t *testing.T) {
	_, client := store(t)
	ctx := ctxFor(t)
	put(t, client, "prod/catalogue.binpb", []byte("generation one"))

	src, err := Open(ctx, "s3://catalogues/prod/catalogue.binpb")
	if err != nil {
		t.Fatal(err)
	}
	if src.String() != "s3://catalogues/prod/catalogue.binpb" {
		t.Errorf("String() = %q", src.String())
	}
	first, err := src.Head(ctx)
	if err != nil || first == "" || strings.Contains(first, `"`) {
		t.Fatalf("Head = %q, %v", first, err)
	}
	data, etag, err := src.Fetch(ctx)
	if err != nil || string(data) != "generation one" || etag != first {
		t.Fatalf("Fetch = %q, %q, %v; Head said %q", data, etag, err, first)
	}

	put(t, client, "prod/catalogue.binpb", []byte("generation two"))
	second, err := src.Head(ctx)
	if err != nil || second == first {
		t.Fatalf("Head after a new object = %q, %v; before it was %q", second, err, first)
	}
	if data, etag, err := src.Fetch(ctx); err != nil || string(data) != "generation two" || etag != second {
		t.Errorf("Fetch = %q, %q, %v", data, etag, err)
	}
}

func TestAnS3SourceRefusesAnArtifactOverTheCeiling(t *testing.T) {
	_, client := store(t)
	ctx := ctxFor(t)
	if artifact.MaxSize <= 16 {
		t.Fatal("the test's ceiling must be below artifact.MaxSize")
	}
	put(t, client, "big", bytes.Repeat([]byte("x"), 17))
	put(t, client, "fits", bytes.Repeat([]byte("x"), 16))
	big, err := openS3(ctx, "catalogues", "big", 16)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = big.Fetch(ctx)
	if tooLarge := (*TooLargeError)(nil); !errors.As(err, &tooLarge) || tooLarge.Size != 17 {
		t.Errorf("Fetch of 17 bytes under a 16-byte ceiling = %v, want a *TooLargeError", err)
	}
	fits, err := openS3(ctx, "catalogues", "fits", 16)
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := fits.Fetch(ctx); err != nil || len(data) != 16 {
		t.Errorf("Fetch at the ceiling = %d bytes, %v", len(data), err)
	}
}

func TestAMissingObjectAndAStoppedStoreAreErrors(t *testing.T) {
	srv, _ := store(t)
	ctx := ctxFor(t)
	src, err := Open(ctx, "s3://catalogues/absent")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Head(ctx); err == nil || !strings.Contains(err.Error(), "s3://catalogues/absent") {
		t.Errorf("Head of a missing object = %v", err)
	}
	if _, _, err := src.Fetch(ctx); err == nil || !strings.Contains(err.Error(), "no such object") {
		t.Errorf("Fetch of a missing object = %v", err)
	}

	srv.Stop()
	if _, err := src.Head(ctx); err == nil {
		t.Error("Head against a stopped store is not an error")
	}
	if _, _, err := src.Fetch(ctx); err == nil {
		t.Error("Fetch against a stopped store is not an error")
	}
}

func TestAMissingObjectIsNotExistLikeAMissingFile(t *testing.T) {
	store(t)
	ctx := ctxFor(t)
	for _, location := range []string{"s3://catalogues/absent.binpb", t.TempDir() + "/absent.binpb"} {
		src, err := Open(ctx, location)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Head(ctx); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: Head: %v, want fs.ErrNotExist", location, err)
		}
		if _, _, err := src.Fetch(ctx); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: Fetch: %v, want fs.ErrNotExist", location, err)
		}
	}
}
