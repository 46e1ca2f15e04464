package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/cli"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/proto"
)

func TestABufImageBuildsTheSameCatalogueAsTheSources(t *testing.T) {
	buf, err := filepath.Abs("../../.tmp/bin/buf")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(buf); err != nil {
		t.Fatalf("buf not found at %s: install it with `make tools`", buf)
	}
	dir := t.TempDir()
	image := filepath.Join(dir, "calc.image.binpb")
	cmd := exec.Command(buf, "build", "examples/calculator/proto", "-o", image)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf build: %v\n%s", err, out)
	}

	fromImage, fromSources := filepath.Join(dir, "image.binpb"), filepath.Join(dir, "sources.binpb")
	if code, _, stderr := run(t, "build", "--image", image, "--source", "a buf image", "-o", fromImage); code != cli.ExitOK {
		t.Fatalf("build --image: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "build", "-f", calculatorManifest, "-o", fromSources); code != cli.ExitOK {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	a, err := artifact.ReadFile(fromImage)
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.ReadFile(fromSources)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Catalogue.GetProvenance(); got.GetCompiler() != "buf image" || got.GetSource() != "a buf image" {
		t.Errorf("provenance %v", got)
	}
	x, y := proto.Clone(a.Catalogue).(*cataloguev1.Catalogue), proto.Clone(b.Catalogue).(*cataloguev1.Catalogue)
	x.Provenance, y.Provenance = nil, nil
	// Only provenance may differ: descriptors, plans, hashes, docs and
	// taxonomy are the same whichever compiler read the sources.
	if !proto.Equal(x, y) {
		t.Fatal("a buf image of the calculator builds a different catalogue than its sources")
	}
	if len(a.Catalogue.GetFieldDocs()) == 0 {
		t.Error("the image's source information gave no field docs")
	}
}
