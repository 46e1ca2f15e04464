package cataloguetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
)

// Build builds the catalogue of every .proto file under the include roots
// and returns its bytes, failing the test on any refusal.
func Build(tb testing.TB, roots ...string) []byte {
	tb.Helper()
	c, err := builder.FromRoots(context.Background(), roots...)
	if err != nil {
		tb.Fatalf("building %v: %v", roots, err)
	}
	return c.Bytes
}

// Load builds the catalogue under the include roots and loads it.
func Load(tb testing.TB, roots ...string) *catalogue.Generation {
	tb.Helper()
	g, err := catalogue.Load(Build(tb, roots...), catalogue.Options{})
	if err != nil {
		tb.Fatalf("loading %v: %v", roots, err)
	}
	return g
}

// Calculator is the bytes of the calculator example's catalogue, built from
// its catalogue.yaml.
func Calculator(tb testing.TB) []byte {
	tb.Helper()
	c, err := builder.FromManifest(context.Background(), filepath.Join(repoRoot(tb), "examples", "calculator", "catalogue.yaml"))
	if err != nil {
		tb.Fatalf("building the calculator: %v", err)
	}
	return c.Bytes
}

func repoRoot(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the repository from cataloguetest")
	}
	// daemon/internal/catalogue/cataloguetest/cataloguetest.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

// WriteLarge writes a contract of packages × toolsPerPackage tools under
// dir, each with its own request and response: a nested message, a
// redacted field, a compartment and protovalidate rules, so loading it does
// all its work. It is the catalogue builder's own load fixture
// (catalogue-builder/internal/build), kept equal so the figures compare.
func WriteLarge(tb testing.TB, dir string, packages, toolsPerPackage int) {
	tb.Helper()
	taxonomy := `syntax = "proto3";
package taxonomy.v1;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.compartments) = {declared: [{name: "pii-contact", description: "Contact details."}]};
option (garm.tool.v1.tool_sets) = {declared: [{name: "support", description: "Support desk."}]};
`
	write(tb, filepath.Join(dir, "taxonomy/v1/taxonomy.proto"), taxonomy)
	for p := range packages {
		var b strings.Builder
		fmt.Fprintf(&b, "syntax = \"proto3\";\npackage load%d.v1;\nimport \"buf/validate/validate.proto\";\nimport \"garm/tool/v1/tool.proto\";\n\n", p)
		b.WriteString("// Contact is how to reach someone.\nmessage Contact {\n  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};\n  // The name.\n  optional string name = 1;\n  // The email.\n  optional string email = 2 [(garm.tool.v1.field_policy) = {read: CLEARANCE_CONFIDENTIAL compartments: [\"pii-contact\"] on_deny: {email_domain: {}}}];\n}\n\n")
		b.WriteString("// Service holds the tools.\nservice Service {\n")
		for i := range toolsPerPackage {
			fmt.Fprintf(&b, "  // Tool%d looks something up.\n  rpc Tool%d(Tool%dRequest) returns (Tool%dResponse) {\n    option (garm.tool.v1.tool) = {name: \"load%d_tool%d\" description: \"Looks up record %d.\" verb: VERB_READ min_clearance: CLEARANCE_INTERNAL sets: [\"support\"]};\n  }\n", i, i, i, i, p, i, i)
		}
		b.WriteString("}\n\n")
		for i := range toolsPerPackage {
			fmt.Fprintf(&b, "// Tool%dRequest names a record.\nmessage Tool%dRequest {\n  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};\n  // The record's id.\n  optional string id = 1 [(buf.validate.field).string = {min_len: 1, max_len: 64}];\n  // How many to return.\n  optional int32 limit = 2 [(buf.validate.field).int32 = {gte: 1, lte: 100}];\n}\n\n", i, i)
			fmt.Fprintf(&b, "// Tool%dResponse is the record.\nmessage Tool%dResponse {\n  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};\n  // The record's id.\n  optional string id = 1;\n  // Who to contact.\n  Contact contact = 2;\n  // Its tags.\n  repeated string tags = 3;\n}\n\n", i, i)
		}
		write(tb, filepath.Join(dir, fmt.Sprintf("load%d/v1/load.proto", p)), b.String())
	}
}

func write(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
