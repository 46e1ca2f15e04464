package catalogue_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

// FuzzLoad holds every generation that loads to what the chain relies on:
// tools sorted by FQN and indexed by position, each reachable by its route,
// its compartment bits naming exactly its compartments, and its rule
// compartments parallel to its plans.
func FuzzLoad(f *testing.F) {
	f.Add(cataloguetest.Calculator(f))
	f.Add(cataloguetest.Build(f, taxonomyFixture))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			return
		}
		if len(g.Tools) == 0 || !slices.IsSortedFunc(g.Tools, compareFQN) {
			t.Fatal("a loaded generation's tools are not sorted or are none")
		}
		for i, tool := range g.Tools {
			if tool.Index != i || g.Route(tool.Method) != tool {
				t.Fatalf("%s: index %d at %d, routed to %v", tool.FQN, tool.Index, i, g.Route(tool.Method))
			}
			if !slices.Equal(g.CompartmentNames(tool.Compartments), tool.CompartmentNames) {
				t.Fatalf("%s: bits name %v, the tool %v", tool.FQN, g.CompartmentNames(tool.Compartments), tool.CompartmentNames)
			}
			if len(tool.InputRuleCompartments) != len(tool.InputPlan.GetRules()) || len(tool.OutputRuleCompartments) != len(tool.OutputPlan.GetRules()) {
				t.Fatalf("%s: rule compartments are not parallel to the plans", tool.FQN)
			}
		}
	})
}

func compareFQN(a, b *call.Tool) int { return strings.Compare(a.FQN, b.FQN) }
