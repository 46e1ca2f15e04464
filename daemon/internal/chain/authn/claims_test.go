package authn

import (
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/jwtclaims"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestClaimsOfTheWrongShapeRefuseTheToken(t *testing.T) {
	f := newFixture(t)
	c := f.claims()
	agent := actor("agent-1", "INTERNAL", []string{"finance"}, []string{"READ"})
	withAct := set(c, "act", agent)
	cases := map[string]map[string]any{
		"no sub":                          set(c, "sub", remove),
		"empty sub":                       set(c, "sub", ""),
		"sub a number":                    set(c, "sub", 7),
		"sub null":                        set(c, "sub", nil),
		"no garm":                         set(c, "garm", remove),
		"garm null":                       set(c, "garm", nil),
		"garm an array":                   set(c, "garm", []any{}),
		"garm a string":                   set(c, "garm", "INTERNAL"),
		"no clearance":                    set(c, "garm.clearance", remove),
		"clearance a number":              set(c, "garm.clearance", 20),
		"clearance null":                  set(c, "garm.clearance", nil),
		"clearance empty":                 set(c, "garm.clearance", ""),
		"clearance unknown":               set(c, "garm.clearance", "SECRET"),
		"clearance unspecified":           set(c, "garm.clearance", "CLEARANCE_UNSPECIFIED"),
		"clearance bare unspecified":      set(c, "garm.clearance", "unspecified"),
		"clearance prefixed twice":        set(c, "garm.clearance", "CLEARANCE_CLEARANCE_INTERNAL"),
		"clearance with a Unicode i":      set(c, "garm.clearance", "ınternal"),
		"clearance with spaces":           set(c, "garm.clearance", " INTERNAL"),
		"compartments a string":           set(c, "garm.compartments", "finance"),
		"compartments null":               set(c, "garm.compartments", nil),
		"compartments of numbers":         set(c, "garm.compartments", []any{1}),
		"compartments holding null":       set(c, "garm.compartments", []any{"finance", nil}),
		"compartments an object":          set(c, "garm.compartments", map[string]any{}),
		"verbs a string":                  set(c, "garm.verbs", "READ"),
		"verbs null":                      set(c, "garm.verbs", nil),
		"verbs of numbers":                set(c, "garm.verbs", []any{1}),
		"tool_sets null":                  set(c, "garm.tool_sets", nil),
		"tool_sets a string":              set(c, "garm.tool_sets", "ops"),
		"tool_sets of numbers":            set(c, "garm.tool_sets", []any{1}),
		"kind a number":                   set(c, "garm.kind", 1),
		"kind null":                       set(c, "garm.kind", nil),
		"tenant a number":                 set(c, "tenant", 7),
		"jti a number":                    set(c, "jti", 7),
		"act null":                        set(c, "act", nil),
		"act a string":                    set(c, "act", "agent-1"),
		"act an array":                    set(c, "act", []any{agent}),
		"act a number":                    set(c, "act", 1),
		"act without garm":                set(c, "act", map[string]any{"sub": "agent-1"}),
		"act without sub":                 set(withAct, "act.sub", remove),
		"act with an empty sub":           set(withAct, "act.sub", ""),
		"act with an unspecified":         set(withAct, "act.garm.clearance", "UNSPECIFIED"),
		"act with garm null":              set(withAct, "act.garm", nil),
		"act with exec":                   set(withAct, "act.exec", map[string]any{"sub": "runner:1"}),
		"exec a string":                   set(c, "exec", "runner:1"),
		"exec a number":                   set(c, "exec", 7),
		"exec null":                       set(c, "exec", nil),
		"exec empty":                      set(c, "exec", map[string]any{}),
		"exec with an empty sub":          set(c, "exec", map[string]any{"sub": ""}),
		"exec with a numeric sub":         set(c, "exec", map[string]any{"sub": 7}),
		"exec with a numeric iss":         set(c, "exec", map[string]any{"sub": "runner:1", "iss": 7}),
		"exec an array":                   set(c, "exec", []any{map[string]any{"sub": "runner:1"}}),
		"garm missing two levels down":    set(set(withAct, "act.act", actor("agent-2", "PUBLIC", nil, nil)), "act.act.garm", remove),
		"clearance unknown two levels in": set(set(withAct, "act.act", actor("agent-2", "TOP", nil, nil)), "act.act.sub", "x"),
	}
	for name, claims := range cases {
		t.Run(name, func(t *testing.T) { f.refuse(t, "Bearer "+f.sign(t, claims)) })
	}
	invalid := []byte(strings.Replace(string(encode(t, c)), "alice", "al\xffce", 1))
	f.refuse(t, "Bearer "+f.keyA.Sign(t, invalid))
}

func TestTheSpellingsTheSpecAllowsAreAccepted(t *testing.T) {
	f := newFixture(t)
	c := f.claims()
	cases := map[string]map[string]any{
		"clearance prefixed":        set(c, "garm.clearance", "CLEARANCE_INTERNAL"),
		"clearance lower case":      set(c, "garm.clearance", "internal"),
		"clearance mixed prefixed":  set(c, "garm.clearance", "Clearance_Internal"),
		"verbs prefixed":            set(c, "garm.verbs", []string{"VERB_READ", "verb_write"}),
		"verbs unknown ignored":     set(c, "garm.verbs", []string{"read", "FLY", "VERB_UNSPECIFIED"}),
		"no compartments":           set(c, "garm.compartments", remove),
		"no verbs":                  set(c, "garm.verbs", remove),
		"no kind":                   set(c, "garm.kind", remove),
		"kind prefixed":             set(c, "garm.kind", "principal_kind_service"),
		"kind unknown":              set(c, "garm.kind", "ROBOT"),
		"no tenant nor jti":         set(set(c, "tenant", remove), "jti", remove),
		"exec with iss":             set(c, "exec", map[string]any{"sub": "runner:1", "iss": "https://ci.example"}),
		"unknown claims ignored":    set(set(c, "scope", 7), "garm.future", []any{1}),
		"act carrying its own iss":  set(set(c, "act", actor("agent-1", "PUBLIC", nil, nil)), "act.iss", issuerA),
		"empty compartments listed": set(c, "garm.compartments", []string{}),
	}
	for name, claims := range cases {
		t.Run(name, func(t *testing.T) { f.accept(t, f.sign(t, claims)) })
	}
	// JSON allows whitespace around the claims object.
	f.accept(t, f.keyA.Sign(t, append([]byte(" \n"), encode(t, f.claims())...)))
	if !strings.Contains(f.logged.String(), "unknown principal kind") || !strings.Contains(f.logged.String(), "ROBOT") {
		t.Fatalf("an unknown kind was not logged:\n%s", f.logged)
	}
}

func TestAnActChainOfFourLevelsIsAcceptedAndOfFiveRefused(t *testing.T) {
	f := newFixture(t)
	chainOf := func(levels int) map[string]any {
		c := f.claims()
		path := "act"
		for i := 1; i < levels; i++ {
			c = set(c, path, actor("agent-"+string(rune('0'+i)), "INTERNAL", []string{"finance"}, []string{"READ"}))
			path += ".act"
		}
		return c
	}
	p := f.accept(t, f.sign(t, chainOf(4)))
	if p.Depth() != 4 {
		t.Fatalf("depth %d, want 4", p.Depth())
	}
	detail := f.refuse(t, "Bearer "+f.sign(t, chainOf(5)))
	if !strings.Contains(detail, "deeper than") {
		t.Fatalf("detail %q does not say the chain is too deep", detail)
	}
	f.refuse(t, "Bearer "+f.sign(t, chainOf(40)))
}

func TestThePrincipalCarriesTheChainOutermostFirst(t *testing.T) {
	f := newFixture(t)
	c := f.claims()
	c = set(c, "act", actor("agent-outer", "CONFIDENTIAL", []string{"finance", "hr"}, []string{"READ", "WRITE"}))
	c = set(c, "act.act", actor("agent-inner", "RESTRICTED", []string{"finance"}, []string{"READ"}))
	c = set(c, "act.act.garm.kind", "SERVICE")
	c = set(c, "exec", map[string]any{"sub": "runner:7"})
	p := f.accept(t, f.sign(t, c))

	want := []call.Actor{
		{Subject: "agent-outer", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT},
		{Subject: "agent-inner", Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_SERVICE},
	}
	if len(p.Act) != 2 || p.Act[0] != want[0] || p.Act[1] != want[1] {
		t.Fatalf("act %+v, want %+v", p.Act, want)
	}
	if p.Agent() != "agent-inner" {
		t.Fatalf("agent %q, want the innermost actor", p.Agent())
	}
	exp := time.Unix(f.clock.Now().Unix()+3600, 0).UTC()
	if p.Subject != "alice" || p.Kind != toolv1.PrincipalKind_PRINCIPAL_KIND_USER || p.Tenant != "acme" ||
		p.JTI != "t-1" || !p.Expiry.Equal(exp) || p.ExecutionSubject != "runner:7" {
		t.Fatalf("outermost attribution wrong: %+v", p)
	}
	if p.Clearance != toolv1.Clearance_CLEARANCE_INTERNAL || p.Verbs != call.VerbsOf(toolv1.Verb_VERB_READ) {
		t.Fatalf("authority not folded: clearance %v verbs %v", p.Clearance, p.Verbs.List())
	}
}

func TestEnumSpellings(t *testing.T) {
	clearances := []struct {
		in   string
		want toolv1.Clearance
		ok   bool
	}{
		{"PUBLIC", toolv1.Clearance_CLEARANCE_PUBLIC, true},
		{"public", toolv1.Clearance_CLEARANCE_PUBLIC, true},
		{"CLEARANCE_RESTRICTED", toolv1.Clearance_CLEARANCE_RESTRICTED, true},
		{"clearance_confidential", toolv1.Clearance_CLEARANCE_CONFIDENTIAL, true},
		{"Internal", toolv1.Clearance_CLEARANCE_INTERNAL, true},
		{"UNSPECIFIED", 0, false},
		{"CLEARANCE_UNSPECIFIED", 0, false},
		{"CLEARANCE_", 0, false},
		{"", 0, false},
		{"10", 0, false},
		{"PUBLİC", 0, false},
		{"PUBLIC ", 0, false},
		{strings.Repeat("A", 100), 0, false},
	}
	for _, c := range clearances {
		got, ok := jwtclaims.Clearance(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseClearance(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	verbs := []struct {
		in   string
		want call.Verbs
	}{
		{"READ", call.VerbsOf(toolv1.Verb_VERB_READ)},
		{"verb_write", call.VerbsOf(toolv1.Verb_VERB_WRITE)},
		{"Destructive", call.VerbsOf(toolv1.Verb_VERB_DESTRUCTIVE)},
		{"VERB_UNSPECIFIED", 0},
		{"ADMIN", 0},
		{"", 0},
	}
	for _, c := range verbs {
		if got := parseVerb(c.in); got != c.want {
			t.Errorf("parseVerb(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	kinds := []struct {
		in   string
		want toolv1.PrincipalKind
		ok   bool
	}{
		{"USER", toolv1.PrincipalKind_PRINCIPAL_KIND_USER, true},
		{"agent", toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT, true},
		{"PRINCIPAL_KIND_SERVICE", toolv1.PrincipalKind_PRINCIPAL_KIND_SERVICE, true},
		{"UNSPECIFIED", toolv1.PrincipalKind_PRINCIPAL_KIND_UNSPECIFIED, true},
		{"ROBOT", 0, false},
	}
	for _, c := range kinds {
		got, ok := parseKind(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("parseKind(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
