package redact

import (
	"slices"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

const internal = toolv1.Clearance_CLEARANCE_INTERNAL

// treePlan is a plan whose paths trip a resolver that compares by string
// prefix: "a" beside "ab" and "a1", numbers 1 beside 12, and a grandchild
// below a denied parent.
var treePlan = &planv1.MessagePlan{Message: "fix.Tree", Rules: []*planv1.FieldRule{
	{Path: "a", Numbers: []int32{1}, Read: confidential},
	{Path: "a.x", Numbers: []int32{1, 1}, Read: internal, AuditOnRead: true},
	{Path: "a.x.y", Numbers: []int32{1, 1, 1}, Read: restricted},
	{Path: "a1", Numbers: []int32{12}, Read: internal},
	{Path: "ab", Numbers: []int32{13}, Read: internal, AuditOnRead: true},
	{Path: "b", Numbers: []int32{2}, Read: internal, Compartments: []string{"red"}},
	{Path: "b.c", Numbers: []int32{2, 1}, Read: restricted, AuditOnRead: true, Compartments: []string{"blue", "red"}},
}}

const (
	red  call.Compartments = 1 << 0
	blue call.Compartments = 1 << 1
)

var treeBits = []call.Compartments{0, 0, 0, 0, 0, red, red | blue}

func TestResolveDecidesEachRuleOnceAndPrunesBySegment(t *testing.T) {
	cases := []struct {
		name            string
		shape           call.Shape
		denied, audited []string
	}{
		{"internal", call.Shape{Clearance: internal}, []string{"a", "b"}, []string{"ab"}},
		{"internal and red", call.Shape{Clearance: internal, Compartments: red}, []string{"a", "b.c"}, []string{"ab"}},
		{"confidential", call.Shape{Clearance: confidential}, []string{"a.x.y", "b"}, []string{"a.x", "ab"}},
		{"restricted and red", call.Shape{Clearance: restricted, Compartments: red}, []string{"b.c"}, []string{"a.x", "ab"}},
		{"restricted, red and blue", call.Shape{Clearance: restricted, Compartments: red | blue}, nil, []string{"a.x", "ab", "b.c"}},
		{"blue alone covers nothing red", call.Shape{Clearance: restricted, Compartments: blue}, []string{"b"}, []string{"a.x", "ab"}},
		{"unspecified", call.Shape{Compartments: red | blue}, []string{"a", "a1", "ab", "b"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := resolve(treePlan, treeBits, tc.shape)
			var denied, audited []string
			for _, r := range res.Denied {
				denied = append(denied, r.GetPath())
			}
			for _, r := range res.Audited {
				audited = append(audited, r.GetPath())
			}
			if !slices.Equal(denied, tc.denied) || !slices.Equal(audited, tc.audited) {
				t.Fatalf("denied %q and audited %q, want %q and %q", denied, audited, tc.denied, tc.audited)
			}
			if (res.Plan == "") != (len(tc.denied) == 0) {
				t.Fatalf("plan address %q for %d denied rules", res.Plan, len(tc.denied))
			}
		})
	}
}

func TestTheCacheNeverHoldsMoreThanItsSize(t *testing.T) {
	r := New(10, nil)
	for c := range 100 {
		r.Resolve(treePlan, treeBits, call.Shape{Clearance: internal, Compartments: call.Compartments(c)})
		if n := r.cache.Len(); n > 10 {
			t.Fatalf("%d resolutions cached with room for 10", n)
		}
	}
	if n := r.cache.Len(); n != 10 {
		t.Fatalf("a full cache holds %d resolutions, want 10", n)
	}
}
