package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"buf.build/go/protovalidate"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The schema corpus: for every tool input of testdata/schema_corpus, a
// corpus of requests — hand-written under requests/<message>/, and generated
// from the descriptor around each hand-written base request — each judged
// by the assembled schema and by protojson and protovalidate (the oracle:
// what garmd parses). They must agree, except where a request is tagged with
// a documented difference (docs/decisions/0007-json-schema-fragments.md):
//
//   - stricter: the schema refuses it on purpose; the oracle may accept it,
//     and for each reason at least one request shows it does, so the
//     difference is pinned, not hidden.
//   - laxer: a rule whose keyword is only an annotation (format, Any's type
//     resolution); the schema admits the request and the oracle refuses it,
//     exactly.
//
// A request the schema admits and the oracle refuses is never allowed
// otherwise.

const corpusDir = "testdata/schema_corpus"

type expectation int

const (
	agree expectation = iota
	stricter
	laxer
)

func (e expectation) String() string {
	return [...]string{"agree", "stricter", "laxer"}[e]
}

// stricterReasons are the deliberate refusals, as the decision note lists
// them.
var stricterReasons = map[string]string{
	"implicit-presence": "a field without presence is required: an absent value would read as a real zero",
	"enum-zero":         "an enum's zero value is not admitted by name",
	"enum-number":       "enums are sent by name, not number",
	"int64-number":      "64-bit integers are sent as strings",
	"json-name":         "properties are the proto field names, not the lowerCamelCase JSON names",
	"non-canonical":     "spellings protojson tolerates but never writes: quoted 32-bit numbers and floats, exponents and -0 in 64-bit strings, signed or zero-padded map keys, durations like .5s or +1s, base64 with line breaks, null for an absent field",
	"non-finite":        "NaN and the infinities (strings in protojson) are not numbers",
}

// laxerReasons are the rules that have only an annotation keyword.
var laxerReasons = map[string]string{
	"format-only":    "ipv6, uri and date-time are formats, which 2020-12 validators treat as annotations",
	"any-resolution": "an Any's @type must name a type garmd can resolve; the schema cannot know which",
	"field-mask":     "a FieldMask's paths must be lowerCamelCase field paths; the schema says string",
	"recursion-cut":  "a message that recurses inside an opaque type (Card's Section and Element) is cut to an open object",
}

type corpusCase struct {
	where  string
	body   []byte
	expect expectation
	reason string
	// handWritten stricter cases are written to show the difference: the
	// oracle must accept them.
	handWritten bool
}

// corpus is the compiled corpus fixture: its input messages' descriptors and
// plans.
type corpus struct {
	inputs []protoreflect.MessageDescriptor
	plans  map[protoreflect.FullName]*planv1.MessagePlan
	all    []*planv1.PackagePlan
}

func loadCorpus(t *testing.T) corpus {
	t.Helper()
	files := fixture.Compile(t, nil, []string{corpusDir}, fixture.ProtoFiles(t, corpusDir)...)
	model, err := compile.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	if diags := compile.Lint(model, compile.ModuleScope); diags.HasErrors() {
		t.Fatalf("the corpus fixture must pass lint, as every golden case does:\n%s", diags)
	}
	c := corpus{plans: map[protoreflect.FullName]*planv1.MessagePlan{}}
	for _, pkg := range model.Packages {
		plan, err := compile.PlanPackage(pkg)
		if err != nil {
			t.Fatal(err)
		}
		c.all = append(c.all, plan)
		for _, mp := range plan.GetMessages() {
			c.plans[protoreflect.FullName(mp.GetMessage())] = mp
		}
		for _, tool := range pkg.Tools {
			c.inputs = append(c.inputs, tool.Desc.Input())
		}
	}
	return c
}

// compileSchema compiles a schema with santhosh-tekuri/jsonschema, which
// also checks it against its meta-schema. Formats are annotations, as 2020-12
// says by default.
func compileSchema(t *testing.T, name string, schema []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem://schema/" + name
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s does not compile: %v\n%s", name, err, schema)
	}
	return s
}

func TestSchemaCorpusAgreesWithProtojsonAndProtovalidate(t *testing.T) {
	c := loadCorpus(t)
	validator, err := protovalidate.New()
	if err != nil {
		t.Fatal(err)
	}
	evidence := map[string]int{}
	total := 0
	for _, md := range c.inputs {
		t.Run(string(md.Name()), func(t *testing.T) {
			assembled, err := compile.AssembleSchema(c.plans[md.FullName()], nil)
			if err != nil {
				t.Fatal(err)
			}
			schema := compileSchema(t, string(md.FullName()), assembled)
			oracle := func(body []byte) error {
				msg := dynamicpb.NewMessage(md)
				if err := (protojson.UnmarshalOptions{}).Unmarshal(body, msg); err != nil {
					return fmt.Errorf("protojson: %w", err)
				}
				if err := validator.Validate(msg); err != nil {
					return fmt.Errorf("protovalidate: %w", err)
				}
				return nil
			}
			cases := corpusCases(t, md)
			total += len(cases)
			for _, cc := range cases {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(cc.body))
				if err != nil {
					t.Fatalf("%s: %v", cc.where, err)
				}
				schemaErr := schema.Validate(inst)
				oracleErr := oracle(cc.body)
				admitted, parsed := schemaErr == nil, oracleErr == nil
				report := func(problem string) {
					t.Errorf("%s [%s %s]: %s\n  request: %s\n  schema: %v\n  oracle: %v", cc.where, cc.expect, cc.reason, problem, cc.body, short(schemaErr), oracleErr)
				}
				switch cc.expect {
				case agree:
					if admitted != parsed {
						report("the schema and the oracle disagree")
					}
				case stricter:
					if admitted {
						report("the schema admits a request it refuses on purpose")
					}
					if parsed {
						evidence["stricter "+cc.reason]++
					} else if cc.handWritten {
						report("a hand-written stricter case must show the oracle accepting it")
					}
				case laxer:
					if !admitted || parsed {
						report("a known laxer case is no longer admitted-by-schema and refused-by-oracle")
					}
					evidence["laxer "+cc.reason]++
				}
			}
		})
	}
	t.Logf("corpus: %d requests over %d inputs; pinned differences: %v", total, len(c.inputs), evidence)
	if total < 1000 {
		t.Errorf("the corpus has only %d requests", total)
	}
	for reason := range stricterReasons {
		if evidence["stricter "+reason] == 0 {
			t.Errorf("no request shows the oracle accepting what the schema refuses for %q: the documented difference is not pinned", reason)
		}
	}
	for reason := range laxerReasons {
		if evidence["laxer "+reason] == 0 {
			t.Errorf("no request pins the known laxer case %q", reason)
		}
	}
}

func short(err error) string {
	if err == nil {
		return "admitted"
	}
	s := err.Error()
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// corpusCases are the hand-written requests of a message and those generated
// around its base request.
func corpusCases(t *testing.T, md protoreflect.MessageDescriptor) []corpusCase {
	t.Helper()
	dir := filepath.Join(corpusDir, "requests", string(md.FullName()))
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var cases []corpusCase
	var base []byte
	for _, path := range paths {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		expect, reason, err := expectationOf(filepath.Base(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if filepath.Base(path) == "base.json" {
			base = body
		}
		cases = append(cases, corpusCase{where: path, body: body, expect: expect, reason: reason, handWritten: true})
	}
	if base == nil {
		t.Fatalf("%s has no base.json to generate requests around", dir)
	}
	return append(cases, generateCases(t, md, base)...)
}

// expectationOf reads a hand-written request's name: base.json and
// agree.<what>.json must agree; stricter.<reason>.<what>.json and
// laxer.<reason>.<what>.json are documented differences.
func expectationOf(name string) (expectation, string, error) {
	parts := strings.Split(strings.TrimSuffix(name, ".json"), ".")
	switch {
	case parts[0] == "base" || parts[0] == "agree":
		return agree, "", nil
	case parts[0] == "stricter" && len(parts) > 2 && stricterReasons[parts[1]] != "":
		return stricter, parts[1], nil
	case parts[0] == "laxer" && len(parts) > 2 && laxerReasons[parts[1]] != "":
		return laxer, parts[1], nil
	}
	return 0, "", fmt.Errorf("name it base.json, agree.<what>.json, stricter.<reason>.<what>.json or laxer.<reason>.<what>.json with a documented reason")
}

// document is a decoded request; numbers keep their spelling.
type document = any

func decodeDocument(t *testing.T, body []byte) document {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v document
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func encodeDocument(v document) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// edited is a deep copy of doc with the object at path changed by edit.
func edited(doc document, path []any, edit func(object map[string]any)) document {
	copied := deepCopy(doc)
	at := copied
	for _, step := range path {
		switch s := step.(type) {
		case string:
			at = at.(map[string]any)[s]
		case int:
			at = at.([]any)[s]
		}
	}
	edit(at.(map[string]any))
	return copied
}

func deepCopy(v document) document {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
