package authn

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

const (
	public       = toolv1.Clearance_CLEARANCE_PUBLIC
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)

var (
	read        = call.VerbsOf(toolv1.Verb_VERB_READ)
	write       = call.VerbsOf(toolv1.Verb_VERB_WRITE)
	destructive = call.VerbsOf(toolv1.Verb_VERB_DESTRUCTIVE)
)

// lvl is a level for the fold table; scope nil is unscoped.
func lvl(c toolv1.Clearance, compartments []string, verbs call.Verbs, scope []string) level {
	return level{subject: "s", clearance: c, compartments: compartments, verbs: verbs,
		scoped: scope != nil, toolSets: scope}
}

func TestTheFoldIntersectsAuthorityOverTheChain(t *testing.T) {
	tax := newTaxonomy("finance", "hr", "legal") // bits: finance 0, hr 1, legal 2
	cases := []struct {
		name         string
		levels       []level
		clearance    toolv1.Clearance
		compartments []string
		bits         call.Compartments
		dropped      []string
		verbs        call.Verbs
		scoped       bool
		toolSets     []string
	}{
		{name: "one level keeps its authority",
			levels:    []level{lvl(confidential, []string{"hr", "finance"}, read|write, nil)},
			clearance: confidential, compartments: []string{"finance", "hr"}, bits: 0b011, verbs: read | write},
		{name: "the lowest clearance wins, whoever holds it",
			levels:    []level{lvl(restricted, nil, read, nil), lvl(public, nil, read, nil), lvl(confidential, nil, read, nil)},
			clearance: public, verbs: read},
		{name: "compartments are those every level holds",
			levels:    []level{lvl(internal, []string{"finance", "hr"}, 0, nil), lvl(internal, []string{"legal", "finance"}, 0, nil)},
			clearance: internal, compartments: []string{"finance"}, bits: 0b001},
		{name: "a level holding no compartments leaves none",
			levels:    []level{lvl(internal, []string{"finance", "hr"}, 0, nil), lvl(internal, nil, 0, nil)},
			clearance: internal},
		{name: "undeclared compartments held in common are dropped",
			levels:    []level{lvl(internal, []string{"finance", "finanse"}, 0, nil), lvl(internal, []string{"finanse", "finance"}, 0, nil)},
			clearance: internal, compartments: []string{"finance"}, bits: 0b001, dropped: []string{"finanse"}},
		{name: "an undeclared compartment only one level holds is not in common",
			levels:    []level{lvl(internal, []string{"finance", "typo"}, 0, nil), lvl(internal, []string{"finance"}, 0, nil)},
			clearance: internal, compartments: []string{"finance"}, bits: 0b001},
		{name: "only undeclared compartments leave none",
			levels:    []level{lvl(internal, []string{"x", "y"}, 0, nil)},
			clearance: internal, dropped: []string{"x", "y"}},
		{name: "verbs are those every level holds",
			levels:    []level{lvl(internal, nil, read|write, nil), lvl(internal, nil, read|destructive, nil)},
			clearance: internal, verbs: read},
		{name: "destructive does not imply write",
			levels:    []level{lvl(internal, nil, destructive, nil), lvl(internal, nil, write|destructive, nil)},
			clearance: internal, verbs: destructive},
		{name: "no level names a scope: unscoped",
			levels:    []level{lvl(internal, nil, 0, nil), lvl(internal, nil, 0, nil)},
			clearance: internal},
		{name: "one level's scope is the chain's",
			levels:    []level{lvl(internal, nil, 0, nil), lvl(internal, nil, 0, []string{"ops", "billing"})},
			clearance: internal, scoped: true, toolSets: []string{"billing", "ops"}},
		{name: "a level without a scope adds no constraint",
			levels:    []level{lvl(internal, nil, 0, []string{"ops"}), lvl(internal, nil, 0, nil), lvl(internal, nil, 0, []string{"ops", "hr"})},
			clearance: internal, scoped: true, toolSets: []string{"ops"}},
		{name: "scopes intersect",
			levels:    []level{lvl(internal, nil, 0, []string{"a", "b"}), lvl(internal, nil, 0, []string{"b", "c"})},
			clearance: internal, scoped: true, toolSets: []string{"b"}},
		{name: "disjoint scopes reach nothing",
			levels:    []level{lvl(internal, nil, 0, []string{"a"}), lvl(internal, nil, 0, []string{"b"})},
			clearance: internal, scoped: true},
		{name: "an empty scope reaches nothing",
			levels:    []level{lvl(internal, nil, 0, []string{})},
			clearance: internal, scoped: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, dropped, _ := fold(&claims{levels: c.levels}, tax)
			if p.Clearance != c.clearance {
				t.Errorf("clearance %v, want %v", p.Clearance, c.clearance)
			}
			if !slices.Equal(p.CompartmentNames, c.compartments) || p.Compartments != c.bits {
				t.Errorf("compartments %v (%b), want %v (%b)", p.CompartmentNames, p.Compartments, c.compartments, c.bits)
			}
			if !slices.Equal(dropped, c.dropped) {
				t.Errorf("dropped %v, want %v", dropped, c.dropped)
			}
			if p.Verbs != c.verbs {
				t.Errorf("verbs %v, want %v", p.Verbs.List(), c.verbs.List())
			}
			if got := slices.Sorted(maps.Keys(p.ToolSets)); p.Scoped != c.scoped || !slices.Equal(got, c.toolSets) {
				t.Errorf("scope %v %v, want %v %v", p.Scoped, got, c.scoped, c.toolSets)
			}
			if p.Scoped && p.ToolSets == nil {
				t.Error("a scoped principal has a nil tool set map")
			}
		})
	}
}

// TestAddingALevelOnlyNarrows checks the fold's promise on random chains:
// whatever the added level holds, the chain never gains authority.
func TestAddingALevelOnlyNarrows(t *testing.T) {
	tax := newTaxonomy("a", "b", "c", "d")
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d", "zz"}
	pick := func() []string {
		var out []string
		for _, n := range names {
			if rng.IntN(2) == 0 {
				out = append(out, n)
			}
		}
		return out
	}
	randomLevel := func() level {
		clearances := []toolv1.Clearance{public, internal, confidential, restricted}
		var scope []string
		if rng.IntN(2) == 0 {
			scope = append([]string{}, pick()...)
		}
		return lvl(clearances[rng.IntN(4)], pick(), call.Verbs(rng.IntN(16))&(read|write|destructive), scope)
	}
	for range 2000 {
		n := 1 + rng.IntN(MaxDepth-1)
		levels := make([]level, n)
		for i := range levels {
			levels[i] = randomLevel()
		}
		before, _, _ := fold(&claims{levels: slices.Clone(levels)}, tax)
		after, _, _ := fold(&claims{levels: append(slices.Clone(levels), randomLevel())}, tax)
		switch {
		case after.Clearance > before.Clearance:
			t.Fatalf("clearance rose from %v to %v", before.Clearance, after.Clearance)
		case !before.Compartments.Covers(after.Compartments):
			t.Fatalf("compartments grew from %v to %v", before.CompartmentNames, after.CompartmentNames)
		case after.Verbs&^before.Verbs != 0:
			t.Fatalf("verbs grew from %v to %v", before.Verbs.List(), after.Verbs.List())
		case before.Scoped && !after.Scoped:
			t.Fatal("a scoped chain became unscoped")
		case before.Scoped:
			for s := range after.ToolSets {
				if !before.ToolSets[s] {
					t.Fatalf("scope grew from %v to %v", before.ToolSets, after.ToolSets)
				}
			}
		}
	}
}
