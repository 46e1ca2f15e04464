package compile_test

import (
	"slices"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
)

func rate(count uint32, window toolv1.Limit_Window, cost uint32, key ...toolv1.Limit_KeyPart) *toolv1.Limit {
	return &toolv1.Limit{Id: "l", Description: "A limit.", Key: key, Cost: cost,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: count, Window: window}}}
}

func inFlight(n uint32, key ...toolv1.Limit_KeyPart) *toolv1.Limit {
	return &toolv1.Limit{Id: "l", Description: "A limit.", Key: key,
		Kind: &toolv1.Limit_Concurrency_{Concurrency: &toolv1.Limit_Concurrency{InFlight: n}}}
}

const (
	tenant  = toolv1.Limit_KEY_PART_TENANT
	subject = toolv1.Limit_KEY_PART_SUBJECT
	agent   = toolv1.Limit_KEY_PART_AGENT
	minute  = toolv1.Limit_WINDOW_MINUTE
	hour    = toolv1.Limit_WINDOW_HOUR
)

func TestASoundLimitHasNoProblemAndOneThatAdmitsNothingIsRefused(t *testing.T) {
	t.Parallel()
	for _, l := range []*toolv1.Limit{rate(1, minute, 0, subject), rate(5, hour, 5, tenant, subject), inFlight(1, toolv1.Limit_KEY_PART_TOOL)} {
		if got := compile.CheckLimit(l); len(got) != 0 {
			t.Errorf("CheckLimit(%v) = %v, want none", l, got)
		}
	}
	for _, l := range []*toolv1.Limit{rate(0, minute, 0, subject), rate(5, hour, 6, subject), inFlight(0, subject)} {
		got := compile.CheckLimit(l)
		if len(got) != 1 || got[0].Rule != "L53" {
			t.Errorf("CheckLimit(%v) = %v, want one L53", l, got)
		}
	}
	if got := compile.CheckLimit(&toolv1.Limit{Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: 1, Window: toolv1.Limit_Window(9)}}, Key: []toolv1.Limit_KeyPart{5}}); len(got) != 4 {
		t.Errorf("an id-less, description-less limit with an unknown key part and window: %v, want four problems", got)
	}
}

func TestResolvingALimitGivesARateItsCostAndSortsItsKey(t *testing.T) {
	t.Parallel()
	declared := rate(10, minute, 0, subject, tenant)
	got := compile.ResolveLimit(declared)
	if got.GetCost() != 1 || !slices.Equal(got.GetKey(), []toolv1.Limit_KeyPart{tenant, subject}) {
		t.Errorf("ResolveLimit = %v, want cost 1 and key tenant, subject", got)
	}
	if declared.GetCost() != 0 || declared.GetKey()[0] != subject {
		t.Errorf("ResolveLimit changed the declared limit: %v", declared)
	}
	if c := compile.ResolveLimit(inFlight(2, subject)).GetCost(); c != 0 {
		t.Errorf("a concurrency bound resolved with cost %d, want 0", c)
	}
	if !proto.Equal(compile.ResolveLimit(rate(10, minute, 1, tenant, subject)), got) {
		t.Error("cost 0 and cost 1 resolve to different limits")
	}
}

func TestComparingLimitsOrdersEveryTerm(t *testing.T) {
	t.Parallel()
	soft := func(l *toolv1.Limit) *toolv1.Limit { l.Soft = true; return l }
	r := compile.ResolveLimit
	cases := []struct {
		name    string
		was, is *toolv1.Limit
		want    compile.LimitOrder
		terms   int
	}{
		{"same", rate(10, minute, 0, subject), rate(10, minute, 1, subject), compile.LimitSame, 0},
		{"lower count", rate(10, minute, 0, subject), rate(5, minute, 0, subject), compile.LimitTighter, 1},
		{"higher count", rate(10, minute, 0, subject), rate(11, minute, 0, subject), compile.LimitLooser, 1},
		{"higher cost", rate(10, minute, 1, subject), rate(10, minute, 2, subject), compile.LimitTighter, 1},
		{"lower cost", rate(10, minute, 2, subject), rate(10, minute, 1, subject), compile.LimitLooser, 1},
		{"lower count and lower cost", rate(10, minute, 2, subject), rate(8, minute, 1, subject), compile.LimitMixed, 2},
		{"lower in_flight", inFlight(3, subject), inFlight(2, subject), compile.LimitTighter, 1},
		{"higher in_flight", inFlight(3, subject), inFlight(4, subject), compile.LimitLooser, 1},
		{"made soft", rate(10, minute, 0, subject), soft(rate(10, minute, 0, subject)), compile.LimitLooser, 1},
		{"made hard", soft(rate(10, minute, 0, subject)), rate(10, minute, 0, subject), compile.LimitTighter, 1},
		{"made soft and lower", rate(10, minute, 0, subject), soft(rate(9, minute, 0, subject)), compile.LimitMixed, 2},
		{"another window", rate(10, minute, 0, subject), rate(10, hour, 0, subject), compile.LimitUnlike, 1},
		{"another key", rate(10, minute, 0, subject), rate(10, minute, 0, agent), compile.LimitUnlike, 1},
		{"another kind", rate(10, minute, 0, subject), inFlight(1, subject), compile.LimitUnlike, 1},
	}
	for _, c := range cases {
		got, terms := compile.CompareLimits(r(c.was), r(c.is))
		if got != c.want || len(terms) != c.terms {
			t.Errorf("%s: CompareLimits = %v %q, want %v with %d term(s)", c.name, got, terms, c.want, c.terms)
		}
	}
}

func TestALimitOnTheAgentOfAToolForPeopleOnlyIsFlagged(t *testing.T) {
	t.Parallel()
	person := &toolv1.ToolPolicy{Audience: []toolv1.Audience{toolv1.Audience_AUDIENCE_PERSON}}
	if w := compile.LimitWarnings(person, rate(5, minute, 0, tenant, agent)); len(w) != 1 || w[0].Rule != "L54" {
		t.Errorf("agent key on a person-only tool: %v, want one L54", w)
	}
	for _, p := range []*toolv1.ToolPolicy{{}, {Audience: []toolv1.Audience{toolv1.Audience_AUDIENCE_PERSON, toolv1.Audience_AUDIENCE_AGENT}}} {
		if w := compile.LimitWarnings(p, rate(5, minute, 0, tenant, agent)); len(w) != 0 {
			t.Errorf("agent key on a tool for agents (%v): %v, want none", p.GetAudience(), w)
		}
	}
}

func TestALimitIsDescribedInOnePhrase(t *testing.T) {
	t.Parallel()
	l := rate(5, minute, 2, subject, tenant)
	l.Soft = true
	if got, want := compile.DescribeLimit(compile.ResolveLimit(l)), "5 per minute per tenant+subject, cost 2, soft"; got != want {
		t.Errorf("DescribeLimit = %q, want %q", got, want)
	}
	if got, want := compile.DescribeLimit(inFlight(3, toolv1.Limit_KEY_PART_TOOL)), "3 in flight per tool"; got != want {
		t.Errorf("DescribeLimit = %q, want %q", got, want)
	}
}
