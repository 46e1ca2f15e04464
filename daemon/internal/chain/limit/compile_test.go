package limit_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func rate(id string, count, cost uint32, w toolv1.Limit_Window, key ...toolv1.Limit_KeyPart) *toolv1.Limit {
	return &toolv1.Limit{Id: id, Description: "a limit", Key: key, Cost: cost,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: count, Window: w}}}
}

func inFlight(id string, n uint32) *toolv1.Limit {
	return &toolv1.Limit{Id: id, Description: "a bound", Key: []toolv1.Limit_KeyPart{toolv1.Limit_KEY_PART_TOOL},
		Kind: &toolv1.Limit_Concurrency_{Concurrency: &toolv1.Limit_Concurrency{InFlight: n}}}
}

const subject = toolv1.Limit_KEY_PART_SUBJECT

// Every limit a catalogue's limits hold that garmd cannot enforce as
// written refuses the mount, naming the tool and the limit.
func TestALimitGarmdCannotEnforceAsWrittenRefusesTheMount(t *testing.T) {
	contract := rate("per_person", 10, 1, toolv1.Limit_WINDOW_MINUTE, subject)
	tool := &call.Tool{FQN: "t.v1.pay", Policy: &toolv1.ToolPolicy{Limits: []*toolv1.Limit{contract}}}
	deployed := func(l *toolv1.Limit) *planv1.LimitPlan {
		return &planv1.LimitPlan{Tool: tool.FQN, Limit: l, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}
	}
	tightened := func(l *toolv1.Limit) *planv1.LimitPlan {
		return &planv1.LimitPlan{Tool: tool.FQN, Limit: l, Contract: contract, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED}
	}
	asContract := &planv1.LimitPlan{Tool: tool.FQN, Limit: contract, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_CONTRACT}
	noWindow := rate("w", 1, 1, toolv1.Limit_WINDOW_UNSPECIFIED, subject)
	twice := rate("k", 1, 1, toolv1.Limit_WINDOW_MINUTE, subject, subject)
	for _, c := range []struct {
		name  string
		plans []*planv1.LimitPlan
		want  string
	}{
		{"an unknown tool", []*planv1.LimitPlan{asContract, {Tool: "t.v1.nope", Limit: contract, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}}, "names no tool"},
		{"a bad id", []*planv1.LimitPlan{asContract, deployed(rate("Bad-Id", 1, 1, toolv1.Limit_WINDOW_MINUTE, subject))}, "id"},
		{"no window", []*planv1.LimitPlan{asContract, deployed(noWindow)}, "window"},
		{"no key", []*planv1.LimitPlan{asContract, deployed(rate("k", 1, 1, toolv1.Limit_WINDOW_MINUTE))}, "no key"},
		{"a key part twice", []*planv1.LimitPlan{asContract, deployed(twice)}, "twice"},
		{"a count below the cost", []*planv1.LimitPlan{asContract, deployed(rate("c", 2, 3, toolv1.Limit_WINDOW_MINUTE, subject))}, "never admit"},
		{"a cost of 0", []*planv1.LimitPlan{asContract, deployed(rate("c", 2, 0, toolv1.Limit_WINDOW_MINUTE, subject))}, "cost 0"},
		{"in flight 0", []*planv1.LimitPlan{asContract, deployed(inFlight("f", 0))}, "never admit"},
		{"a tightening that loosens", []*planv1.LimitPlan{tightened(rate("per_person", 20, 1, toolv1.Limit_WINDOW_MINUTE, subject))}, "loosens"},
		{"a tightening to a longer window", []*planv1.LimitPlan{tightened(rate("per_person", 10, 1, toolv1.Limit_WINDOW_HOUR, subject))}, "loosens"},
		{"a tightening that makes it soft", []*planv1.LimitPlan{tightened(&toolv1.Limit{Id: "per_person", Description: "x", Key: contract.Key, Cost: 1, Soft: true, Kind: contract.Kind})}, "soft"},
		{"a contract limit dropped", nil, "missing"},
		{"no origin", []*planv1.LimitPlan{{Tool: tool.FQN, Limit: contract}}, "origin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, problems := limit.Compile([]*call.Tool{tool}, c.plans)
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "; "), c.want) {
				t.Fatalf("problems %q, want one saying %q", problems, c.want)
			}
		})
	}
	ok := []*planv1.LimitPlan{tightened(rate("per_person", 5, 1, toolv1.Limit_WINDOW_MINUTE, subject)), deployed(inFlight("one_at_a_time", 1))}
	ls, problems := limit.Compile([]*call.Tool{tool}, ok)
	if len(problems) > 0 || len(ls.Of(tool)) != 2 {
		t.Fatalf("a tighter limit and an added bound: %q", problems)
	}
}

// A tool with no limit is answered nil, with nothing to run.
func TestAToolWithNoLimitHasNothingToRun(t *testing.T) {
	tools := []*call.Tool{{FQN: "t.v1.a", Index: 0, Policy: &toolv1.ToolPolicy{}}, {FQN: "t.v1.b", Index: 1, Policy: &toolv1.ToolPolicy{}}}
	ls, problems := limit.Compile(tools, []*planv1.LimitPlan{{Tool: "t.v1.b", Limit: inFlight("one", 1), Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}})
	if len(problems) > 0 || ls.Of(tools[0]) != nil || len(ls.Of(tools[1])) != 1 || !ls.Any() {
		t.Fatalf("%q %v", problems, ls)
	}
	if none, _ := limit.Compile(tools, nil); none.Any() || none.Of(tools[1]) != nil {
		t.Fatal("no limits, yet some")
	}
}
