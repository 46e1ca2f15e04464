package input_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// catalogue is testdata/update.proto built into a catalogue, once per test
// binary, by the same builder garm-catalogue uses.
var catalogue = sync.OnceValues(func() (*artifact.Artifact, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	built, err := builder.FromRoots(ctx, "testdata")
	if err != nil {
		return nil, err
	}
	return built.Artifact, nil
})

func fixture(tb testing.TB) *artifact.Artifact {
	tb.Helper()
	art, err := catalogue()
	if err != nil {
		tb.Fatalf("building testdata/update.proto: %v", err)
	}
	return art
}

// compartments numbers names as a generation does: bit i is the catalogue's
// i-th declared compartment in name order.
func compartments(tb testing.TB, names ...string) call.Compartments {
	tb.Helper()
	declared := fixture(tb).Catalogue.GetCompartments()
	var bits call.Compartments
	for _, name := range names {
		i := slices.IndexFunc(declared, func(d *toolv1.Decl) bool { return d.GetName() == name })
		if i < 0 {
			tb.Fatalf("the fixture declares no compartment %q", name)
		}
		bits |= 1 << i
	}
	return bits
}

// tool is the fixture's tool of the given short name as a generation serves
// it: its descriptors, its plans and each rule's compartments as bits.
func tool(tb testing.TB, name string) *call.Tool {
	tb.Helper()
	art := fixture(tb)
	for _, ct := range art.Tools() {
		if ct.Name != name {
			continue
		}
		pkg := string(ct.Desc.ParentFile().Package())
		in, out := ct.Desc.Input(), ct.Desc.Output()
		t := &call.Tool{
			FQN:        ct.FQN,
			Name:       ct.Name,
			Package:    pkg,
			Method:     ct.Method,
			Policy:     ct.Policy,
			Input:      in,
			Output:     out,
			InputPlan:  art.Plan(pkg, string(in.FullName())),
			OutputPlan: art.Plan(pkg, string(out.FullName())),
		}
		if t.InputPlan == nil {
			tb.Fatalf("the catalogue has no plan for %s", in.FullName())
		}
		for _, rule := range t.InputPlan.GetRules() {
			t.InputRuleCompartments = append(t.InputRuleCompartments, compartments(tb, rule.GetCompartments()...))
		}
		for _, rule := range t.OutputPlan.GetRules() {
			t.OutputRuleCompartments = append(t.OutputRuleCompartments, compartments(tb, rule.GetCompartments()...))
		}
		return t
	}
	tb.Fatalf("the fixture has no tool %q", name)
	return nil
}

// request is t's input message, built from the catalogue's descriptors as
// garmd builds it, holding the given protojson.
func request(tb testing.TB, t *call.Tool, json string) protoreflect.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(t.Input)
	if err := protojson.Unmarshal([]byte(json), m); err != nil {
		tb.Fatalf("request %s: %v", json, err)
	}
	return m
}

// principal is a caller of the given clearance and compartments, running
// under the given exec subject (empty: no exec claim).
func principal(tb testing.TB, exec string, clearance toolv1.Clearance, names ...string) *call.Principal {
	return &call.Principal{
		Subject:          "user:ada",
		Clearance:        clearance,
		Compartments:     compartments(tb, names...),
		CompartmentNames: names,
		Verbs:            call.VerbsOf(toolv1.Verb_VERB_WRITE),
		ExecutionSubject: exec,
	}
}

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)
