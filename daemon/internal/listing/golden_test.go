package listing_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the golden listings")

// digestPlaceholder stands for the catalogue's digest in a golden: the
// digest moves with every change to the builder or the contract, the
// shape must not.
const digestPlaceholder = "sha256:<digest>"

// TestTheCalculatorsListingIsPinnedExactly pins design 7.6's shape byte for
// byte: key order, enum spellings, [] for empty lists, compact JSON with
// the schema's keys sorted. The golden is the answer indented.
func TestTheCalculatorsListingIsPinnedExactly(t *testing.T) {
	g, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		caller caller
	}{
		{"calculator-agent", caller{clearance: public, verbs: []toolv1.Verb{read}}},
		{"calculator-nothing", caller{clearance: public, verbs: []toolv1.Verb{write}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := listing.New(listing.Options{}).List(g, tc.caller.principal(t, g), agent)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(body) {
				t.Fatalf("not JSON: %s", body)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, body); err != nil || !bytes.Equal(compact.Bytes(), body) {
				t.Fatalf("the answer is not compact JSON: %s", body)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, body, "", "  "); err != nil {
				t.Fatal(err)
			}
			got := strings.Replace(indented.String(), g.Digest, digestPlaceholder, 1) + "\n"
			path := filepath.Join("testdata", tc.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./daemon/internal/listing -update writes it)", err)
			}
			if got != string(want) {
				t.Fatalf("the listing differs from %s (-update rewrites it):\n%s", path, got)
			}
		})
	}
}

// Every listed input schema is a valid 2020-12 document: the golden cannot
// be wrong and self-consistent.
func TestEveryListedSchemaValidatesAgainstTheMetaSchema(t *testing.T) {
	meta, err := jsonschema.NewCompiler().Compile(compile.SchemaDialect)
	if err != nil {
		t.Fatalf("the 2020-12 meta-schema: %v", err)
	}
	calc, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	desk := cataloguetest.Load(t, deskFixture)
	checked := 0
	for _, g := range []*catalogue.Generation{calc, desk} {
		for _, c := range []caller{everyone, {clearance: internal, verbs: everyone.verbs}, {clearance: public, verbs: everyone.verbs}} {
			body, err := listing.New(listing.Options{}).List(g, c.principal(t, g), agent)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range decode(t, body).Tools {
				doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.InputSchema))
				if err != nil {
					t.Fatal(err)
				}
				if err := meta.Validate(doc); err != nil {
					t.Errorf("%s: %v\n%s", tool.FQN, err, tool.InputSchema)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no schema was listed")
	}
}
