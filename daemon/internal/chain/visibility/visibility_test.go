package visibility_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/visibility"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

const (
	unspecified  = toolv1.Clearance_CLEARANCE_UNSPECIFIED
	public       = toolv1.Clearance_CLEARANCE_PUBLIC
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED
	read         = toolv1.Verb_VERB_READ
	write        = toolv1.Verb_VERB_WRITE
	destructive  = toolv1.Verb_VERB_DESTRUCTIVE
)

func TestAllowsIsFalseWhenEitherSideIsUnspecified(t *testing.T) {
	cases := []struct {
		have, need toolv1.Clearance
		want       bool
	}{
		{public, public, true},
		{restricted, public, true},
		{internal, confidential, false},
		{unspecified, public, false},
		{restricted, unspecified, false},
		{unspecified, unspecified, false},
	}
	for _, c := range cases {
		if got := call.Allows(c.have, c.need); got != c.want {
			t.Errorf("Allows(%v, %v) = %v", c.have, c.need, got)
		}
	}
}

func TestCheckNamesTheFirstGateThatHidesATool(t *testing.T) {
	tool := &call.Tool{Verb: write, MinClearance: confidential, Compartments: 0b101, Sets: []string{"payments", "support"}}
	full := call.Principal{Verbs: call.VerbsOf(read, write), Clearance: restricted, Compartments: 0b111}
	cases := []struct {
		name string
		edit func(p *call.Principal)
		want visibility.Gate
	}{
		{"everything held, unscoped", func(*call.Principal) {}, visibility.Visible},
		{"destructive does not imply write", func(p *call.Principal) { p.Verbs = call.VerbsOf(read, destructive) }, visibility.Verb},
		{"clearance below", func(p *call.Principal) { p.Clearance = internal }, visibility.Clearance},
		{"clearance equal", func(p *call.Principal) { p.Clearance = confidential }, visibility.Visible},
		{"one compartment missing", func(p *call.Principal) { p.Compartments = 0b011 }, visibility.Compartments},
		{"scoped to a shared set", func(p *call.Principal) { p.Scoped, p.ToolSets = true, map[string]bool{"support": true} }, visibility.Visible},
		{"scoped to another set", func(p *call.Principal) { p.Scoped, p.ToolSets = true, map[string]bool{"analytics": true} }, visibility.Scope},
		{"scoped to nothing", func(p *call.Principal) { p.Scoped, p.ToolSets = true, nil }, visibility.Scope},
	}
	for _, c := range cases {
		p := full
		c.edit(&p)
		if got := visibility.Check(&p, tool); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAToolInNoSetIsInvisibleToEveryScopedCaller(t *testing.T) {
	tool := &call.Tool{Verb: read, MinClearance: public}
	p := &call.Principal{Verbs: call.VerbsOf(read), Clearance: public, Scoped: true, ToolSets: map[string]bool{"support": true}}
	if got := visibility.Check(p, tool); got != visibility.Scope {
		t.Fatalf("a scoped caller saw a tool in no set: %v", got)
	}
	p.Scoped, p.ToolSets = false, nil
	if got := visibility.Check(p, tool); got != visibility.Visible {
		t.Fatalf("an unscoped caller did not see it: %v", got)
	}
}
