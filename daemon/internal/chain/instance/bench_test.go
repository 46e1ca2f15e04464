package instance_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// BenchmarkOneSimpleRule is one require rule of each common shape with a
// cached principal view: budget ≤ 1 µs and ≤ 3 allocations.
func BenchmarkOneSimpleRule(b *testing.B) {
	list := make([]string, 64)
	for i := range list {
		list[i] = fmt.Sprintf("A-%d", i)
	}
	caller := who{subject: "user:b", tenant: "acme", agent: "agent:x", attrs: map[string]call.Attr{
		"customer_id": customerID("C-1001"), "accounts": accounts(list...)}}
	for _, c := range []struct{ name, route, expression, request string }{
		{"equality", instancetest.GetCustomer, `request.customer_id == principal.attrs.customer_id`, `{"customerId":"C-1001"}`},
		{"tenant", instancetest.GetCustomer, `request.tenant == principal.tenant`, `{"tenant":"acme"}`},
		{"membership_64", instancetest.Pay, `request.account_id in principal.attrs.accounts`, `{"accountId":"A-63"}`},
		{"limit", instancetest.Pay, `!principal.delegated || request.amount <= 100000`, `{"amount":"99"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := instancetest.Load(b, map[string]*toolv1.InstancePolicy{c.route: {Require: []*toolv1.InstanceRule{
				{Id: "r", Description: "d", Expression: c.expression}}}})
			if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
				b.Fatal(err)
			}
			ct := g.Route(c.route)
			rules := g.Rules().Of(ct)
			view := caller.principal(g).View
			req := message(b, ct.Input, c.request)
			var v instance.Verdict
			if err := rules.CheckRequest(view, req, &v); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := rules.CheckRequest(view, req, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFilterOverAHundredRows is own_accounts over a page of 100 rows
// the caller may all see (so the page is not changed between rounds):
// budget ≤ 30 µs and ≤ 2 allocations per row.
func BenchmarkFilterOverAHundredRows(b *testing.B) {
	g := bank(b)
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
	caller := who{subject: "user:b", attrs: map[string]call.Attr{"accounts": accounts(ids...)}}
	view := caller.principal(g).View
	req := message(b, ct.Input, `{}`)
	out := message(b, ct.Output, `{"accounts":[`+strings.Join(rows, ",")+`],"total":100}`)
	var v instance.Verdict
	b.ReportAllocs()
	for b.Loop() {
		v = instance.Verdict{}
		if err := rules.CheckAnswer(view, req, out, &v); err != nil || v.RowsFiltered != 0 {
			b.Fatal(err, v)
		}
	}
}

// BenchmarkCompileAtMount is the fixture bank's rules compiled as Mount
// compiles them, with nothing to reuse: budget ≤ 100 µs per rule.
func BenchmarkCompileAtMount(b *testing.B) {
	g := instancetest.Load(b, nil)
	n := 0
	for _, p := range instancetest.Policies() {
		n += len(p.GetRequire()) + len(p.GetReveal()) + len(p.GetFilter())
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := instance.Compile(g.Tools, g.Catalogue.GetAttributes(), len(g.Compartments), nil); problems != nil {
			b.Fatal(problems)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rule")
}

// BenchmarkPrincipalView is a verified principal's view, built once per
// token and generation: budget ≤ 5 µs.
func BenchmarkPrincipalView(b *testing.B) {
	g := bank(b)
	list := make([]string, 64)
	for i := range list {
		list[i] = fmt.Sprintf("A-%d", i)
	}
	p := who{subject: "user:b", tenant: "acme", agent: "agent:x", compartments: []string{"any-customer"},
		attrs: map[string]call.Attr{"customer_id": customerID("C-1001"), "accounts": accounts(list...)}}.principal(g)
	b.ReportAllocs()
	for b.Loop() {
		if g.PrincipalView(p) == nil {
			b.Fatal("no view")
		}
	}
}
