package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/encoding/protojson"
)

// Every schema garm writes — each plan's shell, each rule's fragment, and
// each root assembled from them — is a valid JSON Schema 2020-12 document,
// checked against the meta-schema the validator embeds (no network). The
// plans are every golden plan file under testdata/*/want/, and the schema
// corpus's plans computed directly, so the test never runs on nothing.
func TestEverySchemaValidatesAgainstTheMetaSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	meta, err := c.Compile(compile.SchemaDialect)
	if err != nil {
		t.Fatalf("the 2020-12 meta-schema: %v", err)
	}
	plans := map[string]*planv1.PackagePlan{}
	for _, path := range goldenPlanFiles(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		plan := new(planv1.PackagePlan)
		if err := protojson.Unmarshal(raw, plan); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		plans[path] = plan
	}
	for _, plan := range loadCorpus(t).all {
		plans["schema corpus "+plan.GetPackage()] = plan
	}

	var fragments, roots int
	check := func(where, schema string) {
		t.Helper()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
		if err != nil {
			t.Errorf("%s: not JSON: %v\n%s", where, err, schema)
			return
		}
		if err := meta.Validate(doc); err != nil {
			t.Errorf("%s does not validate against the 2020-12 meta-schema: %v\n%s", where, err, schema)
		}
	}
	for source, plan := range plans {
		for _, mp := range plan.GetMessages() {
			where := source + ": " + mp.GetMessage()
			check(where+" shell", mp.GetSchema())
			fragments++
			for _, rule := range mp.GetRules() {
				check(where+"."+rule.GetPath(), rule.GetSchema())
				fragments++
			}
			assembled, err := compile.AssembleSchema(mp, nil)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			check(where+" assembled", string(assembled))
			// Compiling also compiles every pattern.
			compileSchema(t, strings.NewReplacer("/", "_", " ", "_").Replace(where), assembled)
			roots++
		}
	}
	t.Logf("%d plan files and corpus packages: %d shells and fragments, %d assembled roots", len(plans), fragments, roots)
	if roots == 0 || fragments == 0 {
		t.Fatal("found no schema to check")
	}
}

// goldenPlanFiles are the plan files of every golden case.
func goldenPlanFiles(t *testing.T) []string {
	t.Helper()
	var paths []string
	wants, err := filepath.Glob(filepath.Join("testdata", "*", "want"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range wants {
		err := filepath.WalkDir(want, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".garm.json") {
				paths = append(paths, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

func TestTheMetaSchemaCheckRefusesAnInvalidSchema(t *testing.T) {
	// The check above would pass vacuously if the meta-schema admitted
	// anything; it does not.
	meta, err := jsonschema.NewCompiler().Compile(compile.SchemaDialect)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"type":"strnig"}`, `{"minLength":-1}`, `{"required":"a"}`, `{"properties":[]}`, `{"enum":{}}`} {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(bad)))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Validate(doc) == nil {
			t.Errorf("the meta-schema admits %s", bad)
		}
	}
}
