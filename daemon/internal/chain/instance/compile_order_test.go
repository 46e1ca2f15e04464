package instance_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Tools compile beside each other, and the refusal is the same every time:
// every problem, tools in order, each tool's rules in declaration order.
func TestAMountRefusingManyToolsNamesTheirProblemsInToolOrderEveryTime(t *testing.T) {
	t.Parallel()
	broken := func(ids ...string) *toolv1.InstancePolicy {
		p := &toolv1.InstancePolicy{}
		for _, id := range ids {
			p.Require = append(p.Require, &toolv1.InstanceRule{Id: id, Description: "d", Expression: `principal.attrs.shoe_size == 1`})
		}
		return p
	}
	g := instancetest.Load(t, map[string]*toolv1.InstancePolicy{
		instancetest.GetCustomer:  broken("c1", "c2"),
		instancetest.ListAccounts: broken("l1", "l2"),
		instancetest.GetPayment:   broken("g1", "g2"),
		instancetest.Pay:          broken("p1", "p2"),
	})
	var want []string
	for _, tool := range g.Tools {
		for _, r := range tool.Policy.GetInstance().GetRequire() {
			want = append(want, fmt.Sprintf("tool %s instance rule %q", tool.FQN, r.GetId()))
		}
	}
	if len(want) != 8 {
		t.Fatalf("the fixture gave %d rules, want 8", len(want))
	}
	for range 50 {
		rules, problems := instance.Compile(g.Tools, g.Catalogue.GetAttributes(), len(g.Compartments), nil)
		if rules != nil {
			t.Fatal("rules that do not compile were accepted")
		}
		inOrder := len(problems) == len(want)
		for i := 0; inOrder && i < len(want); i++ {
			inOrder = strings.HasPrefix(problems[i], want[i])
		}
		if !inOrder {
			t.Fatalf("problems named\n%q\nwant, in tool order,\n%q", problems, want)
		}
	}
}

// A mount parses each rule text once for every tool that has it, and the
// generation it serves keeps the compiled programs, not a parse of each
// text beside them (docs/decisions/0141).
func TestAMountedGenerationKeepsNoParseOfItsRules(t *testing.T) {
	t.Parallel()
	same := func(id string) *toolv1.InstancePolicy {
		return &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: id, Description: "d", Expression: `principal.subject != ''`}}}
	}
	g := instancetest.Load(t, map[string]*toolv1.InstancePolicy{
		instancetest.GetCustomer:  same("c"),
		instancetest.ListAccounts: same("l"),
		instancetest.GetPayment:   same("g"),
	})
	rules, problems := instance.Compile(g.Tools, g.Catalogue.GetAttributes(), len(g.Compartments), nil)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if rules.Count() != 3 {
		t.Fatalf("%d rules compiled, want 3", rules.Count())
	}
	if n := rules.Parsed(); n != 0 {
		t.Fatalf("the mounted rules keep %d parsed texts, want none", n)
	}
}
