package buildertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteLarge writes a contract of packages × toolsPerPackage tools under
// dir, each with its own request and response: a nested message, a
// redacted field, a compartment and protovalidate rules, so building or
// loading it does all its work. The tools are named load<p>_tool<i>, one
// package load<p>.v1 each, beside a taxonomy.v1 declaring the compartment
// and tool set they use.
func WriteLarge(tb testing.TB, dir string, packages, toolsPerPackage int) {
	tb.Helper()
	writeLarge(tb, dir, packages, toolsPerPackage, false)
}

// WriteLargeWithRulesAndLimits is WriteLarge with two instance rules and a
// limit on every tool (design 7.16, chain step 4; the limit step): one rule
// reading a principal attribute the taxonomy declares and the request's id,
// one reading whether the call is delegated and the request's limit, and a
// rate per tenant and subject. Each rule is its own CEL program, compiled
// at mount, and each limit is compiled there too, so the figures of this
// contract against WriteLarge's are what the new steps add to a first load
// and mount.
func WriteLargeWithRulesAndLimits(tb testing.TB, dir string, packages, toolsPerPackage int) {
	tb.Helper()
	writeLarge(tb, dir, packages, toolsPerPackage, true)
}

// instanceRules are the rules and the limit WriteLargeWithRulesAndLimits
// gives each tool.
const instanceRules = ` instance: {require: [{id: "own_record" description: "A caller without pii-contact reads only the record its token names." expression: "'pii-contact' in principal.compartments || (has(request.id) && request.id == principal.attrs.record_id)"}, {id: "small_delegated_pages" description: "A delegated call reads at most 50 records." expression: "!principal.delegated || (has(request.limit) && request.limit <= 50)"}]} limits: [{id: "per_subject" description: "Each person looks a record up at most 600 times a minute." key: [KEY_PART_TENANT, KEY_PART_SUBJECT] rate: {count: 600 window: WINDOW_MINUTE}}]`

func writeLarge(tb testing.TB, dir string, packages, toolsPerPackage int, rules bool) {
	tb.Helper()
	taxonomy := `syntax = "proto3";
package taxonomy.v1;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.compartments) = {declared: [{name: "pii-contact", description: "Contact details."}]};
option (garm.tool.v1.tool_sets) = {declared: [{name: "support", description: "Support desk."}]};
`
	var instance string
	if rules {
		taxonomy += `option (garm.tool.v1.attributes) = {declared: [{name: "record_id", description: "The record the caller may read.", type: TYPE_STRING, max_len: 64}]};
`
		instance = instanceRules
	}
	write(tb, filepath.Join(dir, "taxonomy/v1/taxonomy.proto"), taxonomy)
	for p := range packages {
		var b strings.Builder
		fmt.Fprintf(&b, "syntax = \"proto3\";\npackage load%d.v1;\nimport \"buf/validate/validate.proto\";\nimport \"garm/tool/v1/tool.proto\";\n\n", p)
		b.WriteString("// Contact is how to reach someone.\nmessage Contact {\n  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};\n  // The name.\n  optional string name = 1;\n  // The email.\n  optional string email = 2 [(garm.tool.v1.field_policy) = {read: CLEARANCE_CONFIDENTIAL compartments: [\"pii-contact\"] on_deny: {email_domain: {}}}];\n}\n\n")
		b.WriteString("// Service holds the tools.\nservice Service {\n")
		for i := range toolsPerPackage {
			fmt.Fprintf(&b, "  // Tool%d looks something up.\n  rpc Tool%d(Tool%dRequest) returns (Tool%dResponse) {\n    option (garm.tool.v1.tool) = {name: \"load%d_tool%d\" description: \"Looks up record %d.\" verb: VERB_READ min_clearance: CLEARANCE_INTERNAL sets: [\"support\"]%s};\n  }\n", i, i, i, i, p, i, i, instance)
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
