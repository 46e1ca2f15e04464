// Package buildtest builds catalogues from .proto fixtures for tests, through
// the same pipeline garm-catalogue build runs. Tests only.
package buildtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
)

// Producer is the producer recorded by fixture builds.
const Producer = "garm-catalogue/test"

// Build builds the catalogue of every .proto file under the include roots
// and fails the test on any refusal.
func Build(t testing.TB, roots ...string) *build.Result {
	t.Helper()
	res, err := Try(roots...)
	if err != nil {
		t.Fatalf("building %v: %v", roots, err)
	}
	return res
}

// Artifact is Build's artifact, read back.
func Artifact(t testing.TB, roots ...string) *artifact.Artifact {
	t.Helper()
	return Build(t, roots...).Artifact
}

// Try builds like Build and returns the refusal instead of failing.
func Try(roots ...string) (*build.Result, error) {
	m := &manifest.Manifest{Path: "catalogue.yaml", Schema: "v1"}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		m.Include = append(m.Include, manifest.Include{Dir: root, Abs: abs})
	}
	return build.Run(context.Background(), build.Input{Manifest: m, Producer: Producer})
}

// Tree writes files (slash-separated paths to contents) under a new
// temporary directory and returns it.
func Tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
