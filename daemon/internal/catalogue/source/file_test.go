package source_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
)

func TestAFileSourceFingerprintsSizeAndModificationTime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalogue.binpb")
	if err := os.WriteFile(path, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := source.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if src.String() != path {
		t.Errorf("String() = %q", src.String())
	}
	head, err := src.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	data, etag, err := src.Fetch(ctx)
	if err != nil || !bytes.Equal(data, []byte("first")) || etag != head {
		t.Fatalf("Fetch = %q, %q, %v; Head said %q", data, etag, err, head)
	}

	if err := os.WriteFile(path, []byte("second, longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if changed, err := src.Head(ctx); err != nil || changed == head {
		t.Errorf("Head after a change = %q, %v; before it was %q", changed, err, head)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Head(ctx); err == nil {
		t.Error("Head of a missing file is not an error")
	}
	if _, _, err := src.Fetch(ctx); err == nil {
		t.Error("Fetch of a missing file is not an error")
	}
}
