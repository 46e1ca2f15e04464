package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testPath is the path every Parse test reads as; it appears in each message.
const testPath = "catalogue.yaml"

func TestParseRefusesABadManifestWithEveryProblemAtOnce(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // without the "catalogue.yaml:" prefix
	}{
		// The file as a whole.
		{"an empty file", ``, []string{
			`1:1: missing required key "schema"`,
			`1:1: missing required key "include"`,
		}},
		{"only a comment", "# nothing yet\n", []string{
			`1:1: missing required key "schema"`,
			`1:1: missing required key "include"`,
		}},
		{"an empty mapping", "{}\n", []string{
			`1:1: missing required key "schema"`,
			`1:1: missing required key "include"`,
		}},
		{"a syntax error", "schema: v1\ninclude: [proto]\nname: x: y\n", []string{
			`3:1: invalid YAML: mapping values are not allowed in this context`,
		}},
		{"a line that is not a key", "schema: v1\nbad line\ninclude: [proto]\n", []string{
			`2:1: invalid YAML: could not find expected ':'`,
		}},
		{"a tab for indentation", "\tschema: v1\n", []string{
			`1:1: invalid YAML: found character that cannot start any token`,
		}},
		{"a second document", "schema: v1\ninclude: [proto]\n---\nname: two\n", []string{
			`3:1: a manifest is one YAML document; a second one starts here`,
		}},
		{"a trailing document marker", "schema: v1\ninclude: [proto]\n---\n", []string{
			`3:1: a manifest is one YAML document; a second one starts here`,
		}},
		{"a list at the top", "- schema: v1\n", []string{
			`1:1: the manifest must be a mapping of keys, not a list`,
		}},
		{"a string at the top", "schema v1\n", []string{
			`1:1: the manifest must be a mapping of keys, not a string`,
		}},

		// Keys.
		{"an unknown top-level key", "schema: v1\ninclude: [proto]\nnmae: calc\n", []string{
			`3:1: unknown key "nmae" (known: schema, name, source, include, taxonomy, limits)`,
		}},
		{"a key that is not a string", "schema: v1\ninclude: [proto]\n1: x\n", []string{
			`3:1: unknown key "1" (known: schema, name, source, include, taxonomy, limits)`,
		}},
		{"a complex key", "schema: v1\ninclude: [proto]\n? [a]\n: b\n", []string{
			`3:3: keys must be strings, not a list`,
		}},
		{"a duplicate key", "schema: v1\nname: a\ninclude: [proto]\nname: b\n", []string{
			`4:1: duplicate key "name" (first on line 2)`,
		}},

		// schema.
		{"no schema", "name: calc\ninclude: [proto]\n", []string{
			`1:1: missing required key "schema"`,
		}},
		{"another schema", "schema: v2\ninclude: [proto]\n", []string{
			`1:9: unsupported schema "v2": this garm-catalogue reads v1`,
		}},
		{"a numeric schema", "schema: 1\ninclude: [proto]\n", []string{
			`1:9: "schema" must be a string, not an integer (quote it to keep it as text)`,
		}},
		{"a null schema", "schema:\ninclude: [proto]\n", []string{
			`1:8: "schema" must be a string, not null`,
		}},

		// name and source.
		{"a number for name", "schema: v1\ninclude: [proto]\nname: 12\n", []string{
			`3:7: "name" must be a string, not an integer (quote it to keep it as text)`,
		}},
		{"a date for source", "schema: v1\ninclude: [proto]\nsource: 2024-01-01\n", []string{
			`3:9: "source" must be a string, not a timestamp (quote it to keep it as text)`,
		}},
		{"a mapping for source", "schema: v1\ninclude: [proto]\nsource:\n  repo: x\n", []string{
			`4:3: "source" must be a string, not a mapping`,
		}},
		{"a null name", "schema: v1\ninclude: [proto]\nname: ~\n", []string{
			`3:7: "name" must be a string, not null`,
		}},

		// include.
		{"no include", "schema: v1\n", []string{
			`1:1: missing required key "include"`,
		}},
		{"include as a string", "schema: v1\ninclude: proto\n", []string{
			`2:10: "include" must be a list of directories, not a string`,
		}},
		{"include empty", "schema: v1\ninclude: []\n", []string{
			`2:10: "include" must list at least one directory`,
		}},
		{"include null", "schema: v1\ninclude:\n", []string{
			`2:9: "include" must be a list of directories, not null`,
		}},
		{"bad include entries", `schema: v1
include:
  - proto
  - ./proto/
  - proto
  - ""
  - 7
  - {dir: x}
  -
`, []string{
			`4:5: include "./proto/" is the same directory as "proto" (line 3)`,
			`5:5: include "proto" is listed twice (first on line 3)`,
			`6:5: an include entry is empty`,
			`7:5: an include entry must be a string, not an integer (quote it to keep it as text)`,
			`8:5: an include entry must be a string, not a mapping`,
			`9:4: an include entry must be a string, not null`,
		}},

		// taxonomy.
		{"taxonomy null", "schema: v1\ninclude: [proto]\ntaxonomy:\n", []string{
			`3:10: "taxonomy" must list compartments, tool_sets or attributes; leave the key out to let the proto files declare them`,
		}},
		{"taxonomy empty", "schema: v1\ninclude: [proto]\ntaxonomy: {}\n", []string{
			`3:11: "taxonomy" must list compartments, tool_sets or attributes; leave the key out to let the proto files declare them`,
		}},
		{"taxonomy a list", "schema: v1\ninclude: [proto]\ntaxonomy: [pii]\n", []string{
			`3:11: "taxonomy" must be a mapping, not a list`,
		}},
		{"bad taxonomy keys and lists", `schema: v1
include: [proto]
taxonomy:
  compartment: []
  tool_sets: support
`, []string{
			`4:3: unknown key "compartment" in taxonomy (known: compartments, tool_sets, attributes)`,
			`5:14: "tool_sets" must be a list, not a string`,
		}},
		{"bad attributes", `schema: v1
include: [proto]
taxonomy:
  attributes:
    - {description: no name, type: string}
    - {name: tier, type: enum}
    - {name: teams, type: string_list, max_items: -1}
    - {name: vip, type: bool, max_len: many}
    - vip
`, []string{
			`5:7: an attribute needs a "name"`,
			`6:26: an attribute's "type" must be one of string, int, bool, string_list, not "enum"`,
			`7:51: "max_items" must be a whole number from 0 to 4294967295, not -1`,
			`8:40: "max_len" must be a whole number from 0 to 4294967295, not a string`,
			`9:7: an attribute must be a mapping with "name", "description" and "type", not a string`,
		}},
		{"bad declarations", `schema: v1
include: [proto]
taxonomy:
  compartments:
    - description: no name
    - name: ""
    - name: pii
      desc: x
    - pii-contact
    - name: 7
      description:
  tool_sets:
    - {name: support, name: desk}
    - {}
`, []string{
			`5:7: a compartment needs a "name"`,
			`6:13: a compartment's "name" is empty`,
			`8:7: unknown key "desc" in a compartment (known: name, description)`,
			`9:7: a compartment must be a mapping with "name" and "description", not a string`,
			`10:13: "name" must be a string, not an integer (quote it to keep it as text)`,
			`11:19: "description" must be a string, not null`,
			`13:23: duplicate key "name" in a tool set (first on line 13)`,
			`14:7: a tool set needs a "name"`,
		}},

		// Anything beyond plain data.
		{"anchors and aliases", `schema: v1
include: &roots [proto]
taxonomy:
  compartments:
    - &pii {name: pii}
    - *pii
`, []string{
			`2:10: anchors (&roots) are not allowed: a manifest is plain data`,
			`5:7: anchors (&pii) are not allowed: a manifest is plain data`,
			`6:7: aliases (*pii) are not allowed: a manifest is plain data`,
		}},
		{"a merge key", "schema: v1\ninclude: [proto]\n<<: {name: x}\n", []string{
			`3:1: merge keys (<<) are not allowed: a manifest is plain data`,
		}},
		{"tags", "schema: !!str v1\ninclude: [proto]\nname: !calc x\n", []string{
			`1:9: tags (!!str) are not allowed: a manifest is plain data`,
			`3:7: tags (!calc) are not allowed: a manifest is plain data`,
		}},

		// Several at once, sorted by position.
		{"problems everywhere", `name: [calc]
source: github.com/example/calc@abc123
include:
  - proto
  - proto
colour: blue
taxonomy:
  tool_sets:
    - description: nameless
`, []string{
			`1:1: missing required key "schema"`,
			`1:7: "name" must be a string, not a list`,
			`5:5: include "proto" is listed twice (first on line 4)`,
			`6:1: unknown key "colour" (known: schema, name, source, include, taxonomy, limits)`,
			`9:7: a tool set needs a "name"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse(testPath, []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse accepted the manifest: %+v", m)
			}
			if m != nil {
				t.Errorf("Parse returned a manifest with its error: %+v", m)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = testPath + ":" + w
			}
			if got := err.Error(); got != strings.Join(want, "\n") {
				t.Errorf("Parse error:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
			}
			var problems Problems
			if !errors.As(err, &problems) || len(problems) != len(want) {
				t.Errorf("Parse error is not %d Problems: %#v", len(want), err)
			}
		})
	}
}

func TestAGoodManifestReadsEveryField(t *testing.T) {
	const yaml = `# The calculator's catalogue.
schema: v1
name: calculator
source: github.com/example/calc@abc123
include:
  - proto
  - "vendor/protos"
  - /opt/protos/../shared
taxonomy:
  compartments:
    - name: pii-contact
      description: Contact details of a customer.
    - name: 'pii-payment'
  tool_sets:
    - {name: support, description: "Tools for the support desk."}
  attributes:
    - {name: accounts, description: "The accounts the caller may act on.", type: string_list, max_items: 64, max_len: 16}
    - {name: customer_id, type: string}
`
	path := filepath.Join("project", "catalogue.yaml")
	got, err := Parse(path, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs("project")
	if err != nil {
		t.Fatal(err)
	}
	want := &Manifest{
		Path:   path,
		Dir:    dir,
		Schema: SchemaV1,
		Name:   "calculator",
		Source: "github.com/example/calc@abc123",
		Include: []Include{
			{Dir: "proto", Abs: filepath.Join(dir, "proto"), Line: 6, Column: 5},
			{Dir: "vendor/protos", Abs: filepath.Join(dir, "vendor", "protos"), Line: 7, Column: 5},
			{Dir: "/opt/protos/../shared", Abs: filepath.Clean("/opt/shared"), Line: 8, Column: 5},
		},
		Taxonomy: &Taxonomy{
			Compartments: []Decl{
				{Name: "pii-contact", Description: "Contact details of a customer.", Line: 11, Column: 7},
				{Name: "pii-payment", Line: 13, Column: 7},
			},
			ToolSets: []Decl{
				{Name: "support", Description: "Tools for the support desk.", Line: 15, Column: 7},
			},
			Attributes: []Attribute{
				{Name: "accounts", Description: "The accounts the caller may act on.", Type: "string_list", MaxItems: 64, MaxLen: 16, Line: 17, Column: 7},
				{Name: "customer_id", Type: "string", Line: 18, Column: 7},
			},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", got, want)
		if !reflect.DeepEqual(got.Taxonomy, want.Taxonomy) {
			t.Errorf("taxonomy:\n got %+v\nwant %+v", got.Taxonomy, want.Taxonomy)
		}
	}
}

func TestTheOptionalKeysMayBeLeftOut(t *testing.T) {
	m, err := Parse(testPath, []byte("schema: v1\ninclude: [proto]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "" || m.Source != "" || m.Taxonomy != nil {
		t.Errorf("absent keys read as name %q, source %q, taxonomy %+v", m.Name, m.Source, m.Taxonomy)
	}
}

func TestATaxonomyMayDeclareNoneOfAKind(t *testing.T) {
	m, err := Parse(testPath, []byte("schema: v1\ninclude: [proto]\ntaxonomy:\n  compartments: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Taxonomy == nil || len(m.Taxonomy.Compartments) != 0 || len(m.Taxonomy.ToolSets) != 0 {
		t.Errorf("taxonomy = %+v, want present and empty", m.Taxonomy)
	}
}

func TestQuotedAndPlainScalarsAreTheSameString(t *testing.T) {
	for _, schema := range []string{`v1`, `"v1"`, `'v1'`} {
		m, err := Parse(testPath, []byte("schema: "+schema+"\ninclude: [\"proto\"]\nname: \"12\"\n"))
		if err != nil {
			t.Errorf("schema: %s: %v", schema, err)
			continue
		}
		if m.Schema != SchemaV1 || m.Name != "12" || m.Include[0].Dir != "proto" {
			t.Errorf("schema: %s read as %+v", schema, m)
		}
	}
}

func TestIncludeDirsResolveAgainstTheManifestNotTheWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	manifest := filepath.Join(root, "cat", "catalogue.yaml")
	data := []byte("schema: v1\ninclude: [proto, ../shared]\n")
	for _, cwd := range []string{root, filepath.Join(root, "cat"), t.TempDir()} {
		t.Run(filepath.Base(cwd), func(t *testing.T) {
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(cwd)
			rel, err := filepath.Rel(cwd, manifest)
			if err != nil {
				t.Fatal(err)
			}
			for _, path := range []string{manifest, rel} {
				m, err := Parse(path, data)
				if err != nil {
					t.Fatal(err)
				}
				if m.Path != path {
					t.Errorf("Path = %q, want %q as given", m.Path, path)
				}
				wantDir := filepath.Join(root, "cat")
				if m.Dir != wantDir {
					t.Errorf("Parse(%q).Dir = %q, want %q", path, m.Dir, wantDir)
				}
				got := []string{m.Include[0].Abs, m.Include[1].Abs}
				want := []string{filepath.Join(root, "cat", "proto"), filepath.Join(root, "shared")}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("Parse(%q) include = %q, want %q", path, got, want)
				}
			}
		})
	}
}

func TestATildeIsNotExpanded(t *testing.T) {
	m, err := Parse(filepath.Join("/srv", "catalogue.yaml"), []byte("schema: v1\ninclude: [~/protos]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/srv", "~", "protos"); m.Include[0].Abs != want {
		t.Errorf("~/protos resolved to %q, want %q", m.Include[0].Abs, want)
	}
}
