package instance_test

import (
	"fmt"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// Budgets (issue 31): a simple rule with a cached view ≤ 1 µs and ≤ 3 allocs;
// compile and plan per rule ≤ 100 µs; a principal view ≤ 5 µs.

func BenchmarkSimpleRuleCachedView(b *testing.B) {
	env := newEnv(b)
	req, _, _ := messages(b)
	for _, rule := range []struct{ name, expr string }{
		{"equality", `request.account_id == principal.attrs.customer_id`},
		{"membership", `request.account_id in principal.attrs.accounts`},
		{"limit", `request.amount <= 100000 || !principal.delegated`},
		{"tenant", `principal.tenant == 'acme'`},
	} {
		b.Run(rule.name, func(b *testing.B) {
			p := compile(b, env, require(b), rule.expr)
			p2 := customer()
			p2.Tenant = "acme"
			view := env.NewView(p2)
			request := message(req, map[string]any{"account_id": "C-1001", "amount": int64(5)})
			b.ReportAllocs()
			for b.Loop() {
				p.Eval(view, request, nil)
			}
		})
	}
}

func BenchmarkMembershipOf64(b *testing.B) {
	env := newEnv(b)
	req, _, _ := messages(b)
	accounts := make([]string, 64)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("A-%04d", i)
	}
	view := env.NewView(instance.Principal{Subject: "u", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL, Attrs: map[string]any{"accounts": accounts}})
	p := compile(b, env, require(b), `request.account_id in principal.attrs.accounts`)
	request := message(req, map[string]any{"account_id": "A-0063"})
	b.ReportAllocs()
	for b.Loop() {
		p.Eval(view, request, nil)
	}
}

// BenchmarkCompilePerRule compiles a rule whose text the Env has not
// parsed before: the cost of a rule unlike any other of its catalogue.
func BenchmarkCompilePerRule(b *testing.B) {
	benchmarkCompile(b, true)
}

// BenchmarkCompilePerRuleOfATextParsedBefore compiles a rule whose text
// another tool's rule had (docs/decisions/0141): it is checked from a copy
// of the one parse.
func BenchmarkCompilePerRuleOfATextParsedBefore(b *testing.B) {
	benchmarkCompile(b, false)
}

func benchmarkCompile(b *testing.B, forget bool) {
	env := newEnv(b)
	target := require(b)
	const rule = `'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`
	compile(b, env, target, rule) // the target's environment, built once per tool at mount
	b.ReportAllocs()
	for b.Loop() {
		if forget {
			env.ForgetParses()
		}
		if _, err := env.Compile(target, rule); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrincipalView(b *testing.B) {
	env := newEnv(b)
	p := customer()
	p.Compartments = []string{"any-customer", "payments"}
	b.ReportAllocs()
	for b.Loop() {
		env.NewView(p)
	}
}
