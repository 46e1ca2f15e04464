//go:build !race

// Under the race detector sync.Pool drops pooled values on purpose, so these
// counts are pinned only without it: make test runs this package once more
// without the race detector.

package instance_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
)

// TestARequireRuleCostsOnlyTheAllocationsOfTheFieldItReads pins get_customer's two
// require rules (an attribute equality and the tenant): the request is
// never boxed as a CEL object, so each rule costs only the string it reads
// from the request (2 allocations: the field's value and its CEL value),
// 4 for the two (decision 0097's budget: ≤ +4 for the bank's rules).
func TestARequireRuleCostsOnlyTheAllocationsOfTheFieldItReads(t *testing.T) {
	g := bank(t)
	ct := g.Route(instancetest.GetCustomer)
	rules := g.Rules().Of(ct)
	if len(rules.Require) != 2 {
		t.Fatalf("the fixture's get_customer has %d require rules, want 2", len(rules.Require))
	}
	view := who{subject: "user:alice", tenant: "acme", attrs: map[string]call.Attr{"customer_id": customerID("C-1001")}}.principal(g).View
	req := message(t, ct.Input, `{"customerId":"C-1001","tenant":"acme"}`)
	var v instance.Verdict
	n := testing.AllocsPerRun(200, func() {
		if err := rules.CheckRequest(view, req, &v); err != nil {
			t.Fatal(err)
		}
	})
	if n > 4 {
		t.Fatalf("get_customer's require rules cost %v allocations, want ≤ 4", n)
	}
}

// TestAFilterCostsAtMostTwoAllocationsARow pins own_accounts over 100 rows:
// a row is handed to CEL as the message it is, so a row costs only the
// field its rule reads.
func TestAFilterCostsAtMostTwoAllocationsARow(t *testing.T) {
	g := bank(t)
	ct := g.Route(instancetest.ListAccounts)
	rules := g.Rules().Of(ct)
	var rows, ids []string
	for i := range 100 {
		id := fmt.Sprintf("A-%d", i%64)
		rows = append(rows, `{"accountId":"`+id+`","balance":"1"}`)
		if i < 64 {
			ids = append(ids, id)
		}
	}
	view := who{subject: "user:b", attrs: map[string]call.Attr{"accounts": accounts(ids...)}}.principal(g).View
	req := message(t, ct.Input, `{}`)
	out := message(t, ct.Output, `{"accounts":[`+strings.Join(rows, ",")+`],"total":100}`)
	n := testing.AllocsPerRun(50, func() {
		var v instance.Verdict
		if err := rules.CheckAnswer(view, req, out, &v); err != nil || v.RowsFiltered != 0 {
			t.Fatal(err, v)
		}
	})
	if n > 200 {
		t.Fatalf("a filter over 100 rows costs %v allocations, want ≤ 200 (2 a row)", n)
	}
}

// TestAPrincipalViewBoxesNoAttributeTwiceAllocating8AtMost pins the view of a delegated
// caller with a tenant, a compartment, a string attribute and 64 accounts:
// its lists arrive sorted and distinct from the token reader and are held
// as they are, and attributes are bound typed, not through a map of boxed
// values (29 allocations before, decision 0097).
func TestAPrincipalViewBoxesNoAttributeTwiceAllocating8AtMost(t *testing.T) {
	g := bank(t)
	list := make([]string, 64)
	for i := range list {
		list[i] = fmt.Sprintf("A-%02d", i)
	}
	p := who{subject: "user:b", tenant: "acme", agent: "agent:x", compartments: []string{"any-customer"},
		attrs: map[string]call.Attr{"customer_id": customerID("C-1001"), "accounts": accounts(list...)}}.principal(g)
	n := testing.AllocsPerRun(200, func() {
		if g.PrincipalView(p) == nil {
			t.Fatal("no view")
		}
	})
	if n > 8 {
		t.Fatalf("a principal view costs %v allocations, want ≤ 8", n)
	}
}
