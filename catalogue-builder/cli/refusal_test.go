package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/cli"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
)

const header = `syntax = "proto3";
import "garm/tool/v1/tool.proto";
`

// tool is a small, lint-clean tool declaration in a package.
func tool(pkg, name string) string {
	return `syntax = "proto3";
package ` + pkg + `;
import "garm/tool/v1/tool.proto";
service S {
  rpc Get(Req) returns (Res) {
    option (garm.tool.v1.tool) = {name: "` + name + `" description: "Gets it." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC};
  }
}
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string id = 1;
}
message Res {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string value = 1;
}
`
}

const goodManifest = "schema: v1\ninclude:\n  - proto\n"

func TestBadInputRefusesWithAClearMessageAndWritesNothing(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		// stderr must hold every one of these
		want []string
	}{
		{
			name: "a syntax error",
			files: map[string]string{
				"catalogue.yaml":     goodManifest,
				"proto/a/v1/a.proto": "syntax = \"proto3\";\npackage a.v1;\nmessage M {\n  string s = 1\n  string t = 2;\n}\n",
			},
			want: []string{filepath.FromSlash("proto/a/v1/a.proto") + ":5:3: syntax error", "refused: 1 problem(s) reading the sources"},
		},
		{
			name: "an unresolvable import",
			files: map[string]string{
				"catalogue.yaml":     goodManifest,
				"proto/a/v1/a.proto": "syntax = \"proto3\";\npackage a.v1;\nimport \"nowhere/v1/x.proto\";\n",
			},
			want: []string{filepath.FromSlash("proto/a/v1/a.proto") + ":3:8: ", "nowhere/v1/x.proto", "no artifact written"},
		},
		{
			name: "a lint error",
			files: map[string]string{
				"catalogue.yaml":     goodManifest,
				"proto/a/v1/a.proto": strings.Replace(tool("a.v1", "get_a"), ` description: "Gets it."`, "", 1),
			},
			want: []string{"error: L2: a.v1.S.Get: ", "refused: 1 lint error(s), printed above; no artifact written"},
		},
		{
			name: "a manifest with an unknown key",
			files: map[string]string{
				"catalogue.yaml":     "schema: v1\ninclude:\n  - proto\nincludes:\n  - more\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a"),
			},
			want: []string{`catalogue.yaml:4:1: unknown key "includes"`, "no artifact written"},
		},
		{
			name: "an include dir that does not exist",
			files: map[string]string{
				"catalogue.yaml":     "schema: v1\ninclude:\n  - proto\n  - missing\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a"),
			},
			want: []string{`catalogue.yaml:4:5: include "missing": no such directory`, "no artifact written"},
		},
		{
			name: "two packages declaring the same tool name",
			files: map[string]string{
				"catalogue.yaml":     goodManifest,
				"proto/a/v1/a.proto": tool("a.v1", "get"),
				"proto/b/v1/b.proto": tool("b.v1", "get"),
			},
			want: []string{"error: L3: ", `"get"`, "a.v1.S.Get", "b.v1.S.Get", "no artifact written"},
		},
		{
			name: "no tool at all",
			files: map[string]string{
				"catalogue.yaml":     goodManifest,
				"proto/a/v1/a.proto": header + "package a.v1;\nmessage M {}\n",
			},
			want: []string{"the sources declare no tool", "no artifact written"},
		},
		{
			name: "a file adding to the manifest's taxonomy",
			files: map[string]string{
				"catalogue.yaml": goodManifest + "taxonomy:\n  compartments:\n    - name: finance\n      description: Money.\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a") +
					"option (garm.tool.v1.compartments) = {declared: [{name: \"extra\", description: \"More.\"}]};\n",
			},
			want: []string{`error: M1: a/v1/a.proto: declares compartment "extra"`, "no artifact written"},
		},
		{
			name: "a file adding an attribute to the manifest's taxonomy",
			files: map[string]string{
				"catalogue.yaml": goodManifest + "taxonomy:\n  attributes:\n    - {name: customer_id, description: The customer., type: string}\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a") +
					"option (garm.tool.v1.attributes) = {declared: [{name: \"region\", description: \"Where.\", type: TYPE_STRING}]};\n",
			},
			want: []string{`error: M1: a/v1/a.proto: declares attribute "region"`, "no artifact written"},
		},
		{
			name: "a manifest attribute the lint refuses",
			files: map[string]string{
				"catalogue.yaml":     goodManifest + "taxonomy:\n  attributes:\n    - {name: teams, description: Teams., type: string_list}\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a"),
			},
			want: []string{`error: L44: catalogue.yaml:6: attribute "teams": a TYPE_STRING_LIST needs max_items > 0`, "no artifact written"},
		},
		{
			name: "a manifest limit that names no tool and one that admits nothing",
			files: map[string]string{
				"catalogue.yaml": goodManifest + "limits:\n  - {id: x, tool: get_b, description: X., key: [tenant], rate: {count: 1, window: day}}\n" +
					"  - {id: y, all_tools: true, description: Y., key: [tenant], concurrency: {in_flight: 0}}\n",
				"proto/a/v1/a.proto": tool("a.v1", "get_a"),
			},
			want: []string{
				`catalogue.yaml:5:19: limit "x": "get_b" names no tool of the catalogue (did you mean "get_a"?)`,
				`catalogue.yaml:6:5: limit "y": it admits no call: in_flight must be at least 1`,
				"refused: 2 problem(s) with the manifest's limits, printed above; no artifact written",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := buildtest.Tree(t, tc.files)
			t.Chdir(dir)
			out := filepath.Join(dir, "out.binpb")
			code, stdout, stderr := run(t, "build", "-o", out)
			if code != cli.ExitRefused {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, cli.ExitRefused, stdout, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if stdout != "" {
				t.Errorf("a refusal printed on stdout: %s", stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("an artifact was written: %v", err)
			}
			if entries, _ := filepath.Glob(filepath.Join(dir, ".out.binpb*")); len(entries) > 0 {
				t.Errorf("a temporary file was left: %v", entries)
			}
		})
	}
}

func TestARefusedBuildLeavesThePreviousArtifactInPlace(t *testing.T) {
	dir := buildtest.Tree(t, map[string]string{"catalogue.yaml": goodManifest, "proto/a/v1/a.proto": tool("a.v1", "get_a")})
	t.Chdir(dir)
	if code, _, stderr := run(t, "build"); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, err := os.ReadFile("catalogue.binpb")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("proto/a/v1/a.proto", []byte("syntax = \"proto3\";\nbroken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, "build"); code != cli.ExitRefused {
		t.Fatalf("exit %d", code)
	}
	after, err := os.ReadFile("catalogue.binpb")
	if err != nil || string(after) != string(before) {
		t.Fatalf("the previous artifact changed (%v)", err)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"build", "--no-such-flag"},
		{"build", "extra-argument"},
		{"build", "--image", "x.binpb", "-f", "catalogue.yaml"},
		{"build", "--source", "x"},
		{"inspect"},
		{"diff", "one"},
		{"publish", "a.binpb"},
		{"publish", "a.binpb", "https://example.com/a"},
		{"version", "extra"},
	} {
		code, _, stderr := run(t, args...)
		if code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, cli.ExitUsage, stderr)
		}
		if stderr == "" {
			t.Errorf("%v: a usage error said nothing", args)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	code, stdout, _ := run(t, "--help")
	if code != cli.ExitOK || !strings.Contains(stdout, "Exit codes: 0 ok, 1 refused, 2 usage.") {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	for _, name := range []string{"build", "lint", "inspect", "diff", "publish", "version"} {
		code, stdout, stderr := run(t, name, "--help")
		if code != cli.ExitOK || !strings.HasPrefix(stdout, "Usage: garm-catalogue "+name) {
			t.Errorf("%s --help: exit %d\n%s%s", name, code, stdout, stderr)
		}
	}
}

func TestVersionNamesTheProducer(t *testing.T) {
	code, stdout, _ := run(t, "version")
	if code != cli.ExitOK || stdout != cli.Producer()+"\n" {
		t.Fatalf("exit %d: %q", code, stdout)
	}
}
