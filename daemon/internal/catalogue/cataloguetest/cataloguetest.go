package cataloguetest

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/buildertest"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
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
// all its work. It is the catalogue builder's own build fixture
// (buildertest.WriteLarge), so the load and build figures compare.
func WriteLarge(tb testing.TB, dir string, packages, toolsPerPackage int) {
	tb.Helper()
	buildertest.WriteLarge(tb, dir, packages, toolsPerPackage)
}

// WriteLargeWithRulesAndLimits is WriteLarge with two instance rules and a
// limit on every tool (buildertest.WriteLargeWithRulesAndLimits).
func WriteLargeWithRulesAndLimits(tb testing.TB, dir string, packages, toolsPerPackage int) {
	tb.Helper()
	buildertest.WriteLargeWithRulesAndLimits(tb, dir, packages, toolsPerPackage)
}

// Fixture is a catalogue built from test protos and loaded once, on first
// use, as garmd loads one; a failed load is tried again, so every test that
// needs it fails with the reason.
type Fixture struct {
	roots []string
	mu    sync.Mutex
	gen   *catalogue.Generation
}

// NewFixture is the fixture of the .proto files under roots.
func NewFixture(roots ...string) *Fixture { return &Fixture{roots: roots} }

// Generation is the loaded fixture.
func (f *Fixture) Generation(tb testing.TB) *catalogue.Generation {
	tb.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen == nil {
		f.gen = Load(tb, f.roots...)
	}
	return f.gen
}

// Compartments numbers names as the fixture's generation does, failing the
// test on a name it does not declare.
func (f *Fixture) Compartments(tb testing.TB, names ...string) call.Compartments {
	tb.Helper()
	set, _, dropped := f.Generation(tb).CompartmentSet(names)
	if len(dropped) > 0 {
		tb.Fatalf("the fixture declares no compartment %q", dropped)
	}
	return set
}

// Tool is the fixture's tool of the given short name, as its generation
// serves it. It is shared by every test: copy it before changing it.
func (f *Fixture) Tool(tb testing.TB, name string) *call.Tool {
	tb.Helper()
	for _, t := range f.Generation(tb).Tools {
		if t.Name == name {
			return t
		}
	}
	tb.Fatalf("the fixture has no tool %q", name)
	return nil
}

// Message is a message of md, built from the catalogue's descriptors as
// garmd builds one (dynamicpb), holding the given protojson.
func Message(tb testing.TB, md protoreflect.MessageDescriptor, json string) *dynamicpb.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(json), m); err != nil {
		tb.Fatalf("%s %s: %v", md.FullName(), json, err)
	}
	return m
}
