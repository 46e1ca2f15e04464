package compile_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// contract is a file of package pkg whose messages and tool declarations
// pass every rule of design 4.5, so a fixture made from it fails only the rule
// its services break. services is the file's service declarations; a tool
// inside them is declared with tool(...).
func contract(pkg, services string) string {
	return fmt.Sprintf(`syntax = "proto3";
package %s;
import "garm/tool/v1/tool.proto";

%s

// Req asks.
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  // What is asked.
  optional string question = 1;
}

// Res answers.
message Res {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  // The answer.
  optional string answer = 1;
}
`, pkg, services)
}

// tool is a clean (garm.tool.v1.tool) option; name may be empty for the
// default name.
func tool(name string) string {
	named := ""
	if name != "" {
		named = fmt.Sprintf("name: %q ", name)
	}
	return fmt.Sprintf(`{ option (garm.tool.v1.tool) = {%sdescription: "Answers a question." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC effects: {idempotent: true reversibility: REVERSIBILITY_FULL}}; }`, named)
}

// lint compiles files (path → source), builds them in the order given and
// returns the diagnostics, one string each.
func lint(t *testing.T, files ...[2]string) (compile.Diagnostics, []string) {
	t.Helper()
	sources := map[string]string{}
	var paths []string
	for _, f := range files {
		sources[f[0]] = f[1]
		paths = append(paths, f[0])
	}
	ds := compile.Lint(build(t, sources, paths...), compile.CatalogueScope)
	lines := []string{}
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return ds, lines
}

func TestACleanContractHasNoDiagnostics(t *testing.T) {
	ds, lines := lint(t,
		[2]string{"clean/v1/a.proto", contract("clean.v1", `
// Oracle answers questions.
service Oracle {
  // Ask answers a question.
  rpc Ask(Req) returns (Res) `+tool("")+`
  // AskAgain answers a question too.
  rpc AskAgain(Req) returns (Res) `+tool("ask_twice")+`
  // Forget is no tool.
  rpc Forget(Req) returns (Res) { option (garm.tool.v1.tool) = {exclude: true}; }
}`)},
		[2]string{"other/v1/b.proto", contract("other.v1", `
// Oracle answers questions in another package.
service Oracle {
  // Reply answers a question.
  rpc Reply(Req) returns (Res) `+tool("")+`
}`)},
	)
	if len(ds) != 0 || ds.HasErrors() {
		t.Errorf("a clean contract got diagnostics:\n%s", strings.Join(lines, "\n"))
	}
}

func TestL3RefusesToolNamesOutsideThePatternAndNamesUsedTwice(t *testing.T) {
	longest := "a" + strings.Repeat("b", 63) // 64 characters: the longest name allowed
	tooLong := longest + "c"
	pattern := "^[a-z][a-z0-9_]{0,63}$"
	for _, tc := range []struct {
		name  string
		files [][2]string
		want  []string
	}{
		{
			name:  "a name with a hyphen and capitals",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", "service Svc {\n  rpc Add(Req) returns (Res) "+tool("Add-Numbers")+"\n}")}},
			want:  []string{`error: L3: l3.v1.Svc.Add: tool name "Add-Numbers" does not match ` + pattern},
		},
		{
			name:  "a name starting with a digit",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", "service Svc {\n  rpc Add(Req) returns (Res) "+tool("2add")+"\n}")}},
			want:  []string{`error: L3: l3.v1.Svc.Add: tool name "2add" does not match ` + pattern},
		},
		{
			name:  "a name of 65 characters",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", "service Svc {\n  rpc Add(Req) returns (Res) "+tool(tooLong)+"\n}")}},
			want:  []string{fmt.Sprintf(`error: L3: l3.v1.Svc.Add: tool name %q does not match %s`, tooLong, pattern)},
		},
		{
			name:  "a name of 64 characters",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", "service Svc {\n  rpc Add(Req) returns (Res) "+tool(longest)+"\n}")}},
			want:  []string{},
		},
		{
			name: "one name in two services of one package",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", `
service Front {
  rpc Lookup(Req) returns (Res) `+tool("")+`
}
service Back {
  rpc Find(Req) returns (Res) `+tool("lookup")+`
}`)}},
			want: []string{`error: L3: l3.v1.Back.Find: tool name "lookup" is also used by l3.v1.Front.Lookup`},
		},
		{
			name: "one name in two packages",
			files: [][2]string{
				{"l3/v1/a.proto", contract("l3.v1", "service Svc {\n  rpc Lookup(Req) returns (Res) "+tool("")+"\n}")},
				{"l3/v2/b.proto", contract("l3.v2", "service Svc {\n  rpc Lookup(Req) returns (Res) "+tool("")+"\n}")},
			},
			want: []string{`error: L3: l3.v2.Svc.Lookup: tool name "lookup" is also used by l3.v1.Svc.Lookup`},
		},
		{
			name: "one name used three times",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", `
service Svc {
  rpc Lookup(Req) returns (Res) `+tool("")+`
  rpc Find(Req) returns (Res) `+tool("lookup")+`
  rpc Seek(Req) returns (Res) `+tool("lookup")+`
}`)}},
			want: []string{
				`error: L3: l3.v1.Svc.Find: tool name "lookup" is also used by l3.v1.Svc.Lookup`,
				`error: L3: l3.v1.Svc.Seek: tool name "lookup" is also used by l3.v1.Svc.Lookup`,
			},
		},
		{
			name: "an excluded method does not take the name",
			files: [][2]string{{"l3/v1/a.proto", contract("l3.v1", `
service Svc {
  rpc Lookup(Req) returns (Res) { option (garm.tool.v1.tool) = {exclude: true}; }
  rpc Find(Req) returns (Res) `+tool("lookup")+`
}`)}},
			want: []string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := lint(t, tc.files...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("diagnostics:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestL4RefusesAStreamingTool(t *testing.T) {
	src := contract("l4.v1", `
service Stream {
  rpc Upload(stream Req) returns (Res) `+tool("")+`
  rpc Watch(Req) returns (stream Res) `+tool("")+`
  rpc Chat(stream Req) returns (stream Res) `+tool("")+`
  rpc Tail(Req) returns (stream Res) { option (garm.tool.v1.tool) = {exclude: true}; }
  rpc Ask(Req) returns (Res) `+tool("")+`
}`)
	_, got := lint(t, [2]string{"l4/v1/a.proto", src})
	want := []string{
		"error: L4: l4.v1.Stream.Chat: a streaming method cannot be a tool",
		"error: L4: l4.v1.Stream.Upload: a streaming method cannot be a tool",
		"error: L4: l4.v1.Stream.Watch: a streaming method cannot be a tool",
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics:\n got %q\nwant %q", got, want)
	}
}

func TestDiagnosticsAreSortedByPathThenRule(t *testing.T) {
	// L3 is checked before L4, so only sorting puts Alpha's L4 first and
	// Beta's L3 before its L4.
	src := contract("sort.v1", `
service Svc {
  rpc Gamma(Req) returns (Res) `+tool("Gamma")+`
  rpc Beta(stream Req) returns (Res) `+tool("Beta")+`
  rpc Alpha(Req) returns (stream Res) `+tool("")+`
}`)
	ds, got := lint(t, [2]string{"sort/v1/a.proto", src})
	want := []string{
		"error: L4: sort.v1.Svc.Alpha: a streaming method cannot be a tool",
		`error: L3: sort.v1.Svc.Beta: tool name "Beta" does not match ^[a-z][a-z0-9_]{0,63}$`,
		"error: L4: sort.v1.Svc.Beta: a streaming method cannot be a tool",
		`error: L3: sort.v1.Svc.Gamma: tool name "Gamma" does not match ^[a-z][a-z0-9_]{0,63}$`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics:\n got %q\nwant %q", got, want)
	}
	if printed := ds.String(); printed != strings.Join(want, "\n")+"\n" {
		t.Errorf("Diagnostics.String() = %q, want one diagnostic per line", printed)
	}
}

func TestDiagnosticPrintsAsSeverityRulePathMessage(t *testing.T) {
	for _, tc := range []struct {
		d    compile.Diagnostic
		want string
	}{
		{compile.Diagnostic{Severity: compile.Error, Rule: "L3", Path: "p.Svc.M", Message: "bad"}, "error: L3: p.Svc.M: bad"},
		{compile.Diagnostic{Severity: compile.Warning, Rule: "L10", Path: "p.Svc.M(input).f", Message: "low"}, "warning: L10: p.Svc.M(input).f: low"},
		{compile.Diagnostic{Severity: compile.Warning, Rule: "L7", Path: "p/v1/p.proto", Message: "m: n"}, "warning: L7: p/v1/p.proto: m: n"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestHasErrors(t *testing.T) {
	e := compile.Diagnostic{Severity: compile.Error, Rule: "L3", Path: "p.S.M", Message: "m"}
	w := compile.Diagnostic{Severity: compile.Warning, Rule: "L10", Path: "p.S.M", Message: "m"}
	for _, tc := range []struct {
		name string
		ds   compile.Diagnostics
		want bool
	}{
		{"none", nil, false},
		{"empty", compile.Diagnostics{}, false},
		{"one warning", compile.Diagnostics{w}, false},
		{"warnings only", compile.Diagnostics{w, w}, false},
		{"one error", compile.Diagnostics{e}, true},
		{"an error after warnings", compile.Diagnostics{w, w, e}, true},
		{"an error before a warning", compile.Diagnostics{e, w}, true},
	} {
		if got := tc.ds.HasErrors(); got != tc.want {
			t.Errorf("%s: HasErrors() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
