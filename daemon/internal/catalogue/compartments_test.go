package catalogue_test

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

// The taxonomy fixture declares zeta, alpha and mid, in that order.
const taxonomyFixture = "testdata/taxonomy"

func TestCompartmentsAreNumberedInSortedNameOrder(t *testing.T) {
	g := cataloguetest.Load(t, taxonomyFixture)
	if want := []string{"alpha", "mid", "zeta"}; !slices.Equal(g.Compartments, want) {
		t.Fatalf("compartments %v, want %v", g.Compartments, want)
	}
	if want := []string{"audit", "ops"}; !slices.Equal(g.ToolSets, want) {
		t.Fatalf("tool sets %v, want %v", g.ToolSets, want)
	}
	for i, name := range g.Compartments {
		set, kept, dropped := g.CompartmentSet([]string{name})
		if set != call.Compartments(1)<<i || !slices.Equal(kept, []string{name}) || dropped != nil {
			t.Errorf("%s numbered %b (kept %v, dropped %v), want bit %d", name, set, kept, dropped, i)
		}
	}
}

func TestAToolsCompartmentBitsMatchItsNames(t *testing.T) {
	g := cataloguetest.Load(t, taxonomyFixture)
	open := g.Route("/vault.v1.Vault/Open")
	if !slices.Equal(open.CompartmentNames, []string{"alpha", "zeta"}) {
		t.Fatalf("names %v", open.CompartmentNames)
	}
	if open.Compartments != 0b101 || !slices.Equal(g.CompartmentNames(open.Compartments), open.CompartmentNames) {
		t.Fatalf("bits %b name %v", open.Compartments, g.CompartmentNames(open.Compartments))
	}
	if !slices.Equal(open.Sets, []string{"audit", "ops"}) {
		t.Fatalf("sets %v, want them sorted", open.Sets)
	}
	// Each rule's bits are its compartments, numbered the same way.
	plans := []struct {
		name string
		bits []call.Compartments
		want map[string]call.Compartments
	}{
		{"input", open.InputRuleCompartments, map[string]call.Compartments{"box": 0, "reason": 0b010}},
		{"output", open.OutputRuleCompartments, map[string]call.Compartments{"content": 0b101, "label": 0}},
	}
	for _, p := range plans {
		rules := open.InputPlan.GetRules()
		if p.name == "output" {
			rules = open.OutputPlan.GetRules()
		}
		for i, r := range rules {
			if p.bits[i] != p.want[r.GetPath()] || !slices.Equal(g.CompartmentNames(p.bits[i]), r.GetCompartments()) {
				t.Errorf("%s rule %s: bits %b, want %b (%v)", p.name, r.GetPath(), p.bits[i], p.want[r.GetPath()], r.GetCompartments())
			}
		}
	}
}

func TestCompartmentSetDropsUndeclaredNames(t *testing.T) {
	g := cataloguetest.Load(t, taxonomyFixture)
	cases := []struct {
		names         []string
		set           call.Compartments
		kept, dropped []string
	}{
		{nil, 0, nil, nil},
		{[]string{"zeta", "alpha"}, 0b101, []string{"alpha", "zeta"}, nil},
		{[]string{"zeta", "typo", "alpha", "zeta", "typo"}, 0b101, []string{"alpha", "zeta"}, []string{"typo"}},
		{[]string{"Alpha", "", "mid"}, 0b010, []string{"mid"}, []string{"", "Alpha"}},
		{[]string{"nothing", "declared"}, 0, nil, []string{"declared", "nothing"}},
	}
	for _, c := range cases {
		set, kept, dropped := g.CompartmentSet(c.names)
		if set != c.set || !slices.Equal(kept, c.kept) || !slices.Equal(dropped, c.dropped) {
			t.Errorf("CompartmentSet(%q) = %b %q %q, want %b %q %q", c.names, set, kept, dropped, c.set, c.kept, c.dropped)
		}
	}
}

func TestCompartmentNamesIgnoresBitsTheGenerationDoesNotNumber(t *testing.T) {
	g := cataloguetest.Load(t, taxonomyFixture)
	if got := g.CompartmentNames(^call.Compartments(0)); !slices.Equal(got, g.Compartments) {
		t.Fatalf("every bit set names %v", got)
	}
	if got := g.CompartmentNames(0); got != nil {
		t.Fatalf("no bit names %v", got)
	}
}
