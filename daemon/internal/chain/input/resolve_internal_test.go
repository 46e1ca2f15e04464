package input

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

const (
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
)

// treePlan is a plan whose paths trip a resolver that compares by string
// prefix ("a" beside "a1" and "ab"), with a grandchild below an unwritable
// parent, write clearances apart from read ones, and a runner-sourced key.
var treePlan = &planv1.MessagePlan{Message: "fix.Tree", Rules: []*planv1.FieldRule{
	{Path: "a", Numbers: []int32{1}, Read: internal, Write: confidential},
	{Path: "a.x", Numbers: []int32{1, 1}, Read: internal, Write: internal},
	{Path: "a.x.y", Numbers: []int32{1, 1, 1}, Read: internal, Write: restricted},
	{Path: "a1", Numbers: []int32{12}, Read: internal, Write: confidential},
	{Path: "ab", Numbers: []int32{13}, Read: restricted, Write: internal},
	{Path: "b", Numbers: []int32{2}, Read: internal, Write: internal, Compartments: []string{"red"}},
	{Path: "idempotency_key", Numbers: []int32{3}, Read: internal, Write: internal, RunnerSourced: true},
}}

const red call.Compartments = 1 << 0

var treeBits = []call.Compartments{0, 0, 0, 0, 0, red, 0}

func TestResolveDecidesWritabilityByWriteClearanceAndPrunesBySegment(t *testing.T) {
	cases := []struct {
		name               string
		shape              call.Shape
		unwritable, runner []string
	}{
		{"internal", call.Shape{Clearance: internal}, []string{"a", "a1", "b"}, []string{"idempotency_key"}},
		{"internal and red", call.Shape{Clearance: internal, Compartments: red}, []string{"a", "a1"}, []string{"idempotency_key"}},
		{"confidential", call.Shape{Clearance: confidential}, []string{"a.x.y", "b"}, []string{"idempotency_key"}},
		{"restricted and red", call.Shape{Clearance: restricted, Compartments: red}, nil, []string{"idempotency_key"}},
		{"unspecified", call.Shape{Compartments: red}, []string{"a", "a1", "ab", "b", "idempotency_key"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wp := resolve(treePlan, treeBits, tc.shape)
			var unwritable, runner []string
			for _, r := range wp.unwritable {
				unwritable = append(unwritable, r.GetPath())
			}
			for _, r := range wp.runner {
				runner = append(runner, r.GetPath())
			}
			if !slices.Equal(unwritable, tc.unwritable) || !slices.Equal(runner, tc.runner) {
				t.Fatalf("unwritable %q and runner %q, want %q and %q", unwritable, runner, tc.unwritable, tc.runner)
			}
		})
	}
}

func TestTheSameShapeSharesOneWritePlan(t *testing.T) {
	c := NewChecker(16)
	low := call.Shape{Clearance: internal}
	first := c.resolve(treePlan, treeBits, low)
	if c.resolve(treePlan, treeBits, low) != first {
		t.Error("the same plan and shape resolved twice gave two write plans")
	}
	if c.resolve(treePlan, treeBits, call.Shape{Clearance: internal, Compartments: red}) == first {
		t.Error("another shape was given the first shape's write plan")
	}
}

func TestTheCheckersCacheNeverHoldsMoreThanItsSize(t *testing.T) {
	c := NewChecker(10)
	for n := range 100 {
		c.resolve(treePlan, treeBits, call.Shape{Clearance: internal, Compartments: call.Compartments(n)})
		if got := c.cache.Len(); got > 10 {
			t.Fatalf("%d write plans cached with room for 10", got)
		}
	}
}
