package catalogue_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
)

func TestTheCalculatorCatalogueLoadsWithItsThreeToolsAndRoutesThem(t *testing.T) {
	data := cataloguetest.Calculator(t)
	g, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Digest != artifact.Digest(data) || g.Size != len(data) {
		t.Fatalf("digest %s size %d, want %s and %d", g.Digest, g.Size, artifact.Digest(data), len(data))
	}
	if g.Producer != builder.Producer || g.SchemaVersion != artifact.SchemaVersion {
		t.Fatalf("producer %q schema %d", g.Producer, g.SchemaVersion)
	}
	var fqns []string
	for i, tool := range g.Tools {
		fqns = append(fqns, tool.FQN)
		if tool.Index != i {
			t.Errorf("%s has index %d at position %d", tool.FQN, tool.Index, i)
		}
	}
	if want := []string{"calc.v1.add", "calc.v1.divide", "calc.v1.summarize"}; !slices.Equal(fqns, want) {
		t.Fatalf("tools %v, want %v", fqns, want)
	}

	add := g.Route("/calc.v1.Calculator/Add")
	if add == nil || add != g.Tools[0] {
		t.Fatalf("the Add route gives %v", add)
	}
	checks := []struct{ what, got, want string }{
		{"name", add.Name, "add"},
		{"package", add.Package, "calc.v1"},
		{"service", add.Service, "calc.v1.Calculator"},
		{"method", add.Method, "/calc.v1.Calculator/Add"},
		{"subject", add.Subject, "calc.v1.Calculator.Add"},
		{"input", string(add.Input.FullName()), "calc.v1.AddRequest"},
		{"output", string(add.Output.FullName()), "calc.v1.AddResponse"},
		{"input plan", add.InputPlan.GetMessage(), "calc.v1.AddRequest"},
		{"output plan", add.OutputPlan.GetMessage(), "calc.v1.AddResponse"},
		{"descriptor hash", add.DescriptorHash, g.Catalogue.GetDescriptorHashes()["calc.v1"]},
		{"title", add.Policy.GetTitle(), "Add two numbers"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if add.Verb != toolv1.Verb_VERB_READ || add.MinClearance != toolv1.Clearance_CLEARANCE_PUBLIC {
		t.Errorf("verb %v clearance %v", add.Verb, add.MinClearance)
	}
	if len(add.DescriptorHash) != 64 {
		t.Errorf("descriptor hash %q", add.DescriptorHash)
	}
	if len(add.InputRuleCompartments) != len(add.InputPlan.GetRules()) || len(add.OutputRuleCompartments) != len(add.OutputPlan.GetRules()) {
		t.Error("rule compartments are not parallel to the plans' rules")
	}
	for _, missing := range []string{"/calc.v1.Calculator/Subtract", "calc.v1.Calculator.Add", "/calc.v1.calculator/add", ""} {
		if g.Route(missing) != nil {
			t.Errorf("route %q found a tool", missing)
		}
	}
}

func TestAToolsDescriptorsAreTheArtifactsOwn(t *testing.T) {
	g, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The calculator's generated code is not linked into this test, so
	// the process registry cannot have supplied the descriptor.
	if _, err := protoregistry.GlobalFiles.FindFileByPath("calc/v1/calc.proto"); err == nil {
		t.Fatal("the calculator's descriptors are linked into this test; it proves nothing")
	}
	add := g.Route("/calc.v1.Calculator/Add")
	if add.Input.ParentFile().Path() != "calc/v1/calc.proto" || add.Input.Fields().ByName("a") == nil {
		t.Fatalf("input descriptor %v", add.Input)
	}
}

// reencode changes a real catalogue and writes it back.
func reencode(t *testing.T, data []byte, change func(c *cataloguev1.Catalogue)) []byte {
	t.Helper()
	c := new(cataloguev1.Catalogue)
	if err := proto.Unmarshal(data, c); err != nil {
		t.Fatal(err)
	}
	change(c)
	out, err := artifact.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestALoadRefusesWithASentenceNamingWhatIsWrong(t *testing.T) {
	calc := cataloguetest.Calculator(t)
	cases := []struct {
		name string
		data []byte
		opts catalogue.Options
		want string
	}{
		{"garbage bytes", []byte("\xff\xff\xff\xff this is not a catalogue"), catalogue.Options{}, "not a catalogue"},
		{"a truncated artifact", calc[:len(calc)-7], catalogue.Options{}, "not a catalogue"},
		{"no bytes at all", nil, catalogue.Options{}, "names no annotation schema version"},
		{"a newer schema version", reencode(t, calc, func(c *cataloguev1.Catalogue) {
			c.AnnotationSchemaVersion = artifact.SchemaVersion + 1
		}), catalogue.Options{}, "it was written for annotation schema version 2 and this build of garmd reads 1: upgrade garmd before adopting it"},
		{"zero tools", reencode(t, calc, func(c *cataloguev1.Catalogue) {
			for _, f := range c.GetFiles().GetFile() {
				f.Service = nil
			}
			c.Plans, c.DescriptorHashes = nil, nil
		}), catalogue.Options{}, "declares no tool"},
		{"more tools than --max-tools", calc, catalogue.Options{MaxTools: 2}, "it declares 3 tools, more than the 2 this garmd allows (--max-tools)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := catalogue.Load(tc.data, tc.opts)
			if err == nil || g != nil {
				t.Fatalf("loaded %v", g)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "refusing catalogue sha256:") {
				t.Fatalf("refusal %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestANewerSchemaVersionIsAVersionErrorUnderneath(t *testing.T) {
	data := reencode(t, cataloguetest.Calculator(t), func(c *cataloguev1.Catalogue) { c.AnnotationSchemaVersion = 9 })
	_, err := catalogue.Load(data, catalogue.Options{})
	if v := (*artifact.VersionError)(nil); !errors.As(err, &v) || v.Version != 9 {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "this program") {
		t.Fatalf("the refusal names no program: %q", err)
	}
}

func TestExactlyMaxToolsLoads(t *testing.T) {
	g, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{MaxTools: 3})
	if err != nil || len(g.Tools) != 3 {
		t.Fatalf("got %v, %v", g, err)
	}
}

func TestAnArtifactOverTheCeilingIsRefusedBeforeItIsRead(t *testing.T) {
	_, err := catalogue.Load(make([]byte, artifact.MaxSize+1), catalogue.Options{})
	if err == nil || !strings.Contains(err.Error(), "larger than 256 MiB") || strings.Contains(err.Error(), "sha256:") {
		t.Fatalf("bytes over the ceiling: %v", err)
	}

	// A sparse file: its size says too large, and nothing is read.
	path := filepath.Join(t.TempDir(), "huge.binpb")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(artifact.MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = catalogue.LoadFile(path, catalogue.Options{})
	if err == nil || !strings.Contains(err.Error(), "larger than the 256 MiB ceiling") || !strings.Contains(err.Error(), path) {
		t.Fatalf("a file over the ceiling: %v", err)
	}
}

func TestLoadFileReadsTheSameGenerationAsLoad(t *testing.T) {
	data := cataloguetest.Calculator(t)
	path := filepath.Join(t.TempDir(), "calculator.binpb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := catalogue.LoadFile(path, catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Digest != artifact.Digest(data) || len(g.Tools) != 3 {
		t.Fatalf("%s, %d tools", g.Digest, len(g.Tools))
	}
	if _, err := catalogue.LoadFile(filepath.Join(t.TempDir(), "absent.binpb"), catalogue.Options{}); err == nil || !strings.Contains(err.Error(), "absent.binpb") {
		t.Fatalf("a missing file: %v", err)
	}
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := catalogue.LoadFile(path, catalogue.Options{}); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a catalogue") {
		t.Fatalf("a truncated file: %v", err)
	}
}
