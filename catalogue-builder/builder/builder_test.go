package builder_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
)

func TestTheCalculatorsManifestBuildsTheSameBytesTwice(t *testing.T) {
	first, err := builder.FromManifest(context.Background(), "../../examples/calculator/catalogue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	second, err := builder.FromRoots(context.Background(), "../../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Artifact.Tools()) != 3 {
		t.Fatalf("want the calculator's 3 tools, got %d", len(first.Artifact.Tools()))
	}
	back, err := artifact.Read(first.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if back.Digest != first.Artifact.Digest {
		t.Fatalf("bytes read back to %s, built as %s", back.Digest, first.Artifact.Digest)
	}
	// The manifest adds its source to provenance; the roots build names none.
	if first.Artifact.Catalogue.GetProvenance().GetSource() == second.Artifact.Catalogue.GetProvenance().GetSource() {
		t.Fatal("the manifest's source should reach provenance")
	}
}

func TestARefusedBuildCarriesEveryDiagnostic(t *testing.T) {
	dir := t.TempDir()
	// A tool whose fields declare no policy: lint L1 refuses each of them.
	proto := `syntax = "proto3";
package fix.v1;
import "garm/tool/v1/tool.proto";
message Req { string a = 1; string b = 2; }
message Res {}
service S {
  rpc Get(Req) returns (Res) { option (garm.tool.v1.tool) = { description: "d" verb: VERB_READ min_clearance: CLEARANCE_PUBLIC }; }
}
`
	if err := os.WriteFile(filepath.Join(dir, "fix.proto"), []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := builder.FromRoots(context.Background(), dir)
	if err == nil {
		t.Fatal("a contract without field policies built a catalogue")
	}
	for _, want := range []string{"refused", "(input).a: the field has no policy", "(input).b: the field has no policy"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	}
}
