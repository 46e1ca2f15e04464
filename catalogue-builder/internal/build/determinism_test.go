package build_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	"github.com/garm-dev/garm/catalogue-builder/internal/sources"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// copyTree copies the shop fixture to a new temporary directory and returns
// it, so a test can change sources and build from paths of its own.
func copyTree(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return to
}

// buildIn writes a manifest listing the include roots in the order given
// into dir, changes the working directory to workdir, and builds from the
// manifest's path relative to it.
func buildIn(t *testing.T, dir, workdir string, include ...string) []byte {
	t.Helper()
	yaml := "schema: v1\nname: shop\nsource: fixture\ninclude:\n"
	for _, inc := range include {
		yaml += "  - " + inc + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(workdir)
	rel, err := filepath.Rel(workdir, filepath.Join(dir, "catalogue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Load(rel)
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Run(context.Background(), build.Input{Manifest: m, Producer: buildtest.Producer})
	if err != nil {
		t.Fatal(err)
	}
	return res.Bytes
}

func TestTheSameSourcesGiveTheSameBytesFromAnyDirectoryInAnyOrder(t *testing.T) {
	fixture, err := filepath.Abs("testdata/shop")
	if err != nil {
		t.Fatal(err)
	}
	first, second := copyTree(t, fixture), copyTree(t, fixture)
	a := buildIn(t, first, first, "tools", "shared")
	b := buildIn(t, second, filepath.Join(second, "tools", "shop"), "shared", "tools")
	if !bytes.Equal(a, b) {
		t.Fatalf("two builds of the same sources differ: %s and %s", artifact.Digest(a), artifact.Digest(b))
	}
	for _, dir := range []string{first, second} {
		if bytes.Contains(a, []byte(dir)) {
			t.Errorf("the artifact holds the build directory %s", dir)
		}
	}
	again := buildIn(t, first, t.TempDir(), "tools", "shared")
	if !bytes.Equal(a, again) {
		t.Fatal("a rebuild differs")
	}
}

func TestAnImageGivesTheSameCatalogueWhateverItsFileOrder(t *testing.T) {
	set, err := sources.Compile(context.Background(), absAll(t, "testdata/shop/tools", "testdata/shop/shared"))
	if err != nil {
		t.Fatal(err)
	}
	// An image as buf or protoc writes one: every file with its imports,
	// source information kept, here in a shuffled order.
	var files []*descriptorpb.FileDescriptorProto
	for _, fd := range compile.WithImports(set.Files) {
		files = append(files, protodesc.ToFileDescriptorProto(fd))
	}
	var built [][]byte
	for seed := range uint64(3) {
		shuffled := append([]*descriptorpb.FileDescriptorProto{}, files...)
		rand.New(rand.NewPCG(seed, seed)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		image, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: shuffled})
		if err != nil {
			t.Fatal(err)
		}
		res, err := build.Run(context.Background(), build.Input{Image: image, Source: "fixture", Producer: buildtest.Producer})
		if err != nil {
			t.Fatal(err)
		}
		built = append(built, res.Bytes)
		if got := res.Artifact.Catalogue.GetProvenance().GetCompiler(); got != "FileDescriptorSet" {
			t.Errorf("compiler %q, want FileDescriptorSet", got)
		}
	}
	for _, b := range built[1:] {
		if !bytes.Equal(built[0], b) {
			t.Fatal("images holding the same files in another order build different artifacts")
		}
	}
	// The image build and the source build differ only in provenance.
	fromImage, err := artifact.Read(built[0])
	if err != nil {
		t.Fatal(err)
	}
	fromSources := buildtest.Artifact(t, "testdata/shop/tools", "testdata/shop/shared")
	if !equalExcept(fromImage, fromSources, func(m proto.Message) { m.(*cataloguev1.Catalogue).Provenance = nil }) {
		t.Fatal("an image of the sources builds a different catalogue than the sources")
	}
}

func absAll(t *testing.T, dirs ...string) []string {
	t.Helper()
	out := make([]string, len(dirs))
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = abs
	}
	return out
}

// edit rewrites one file of a copied fixture, failing when old is not in it.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(raw), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
