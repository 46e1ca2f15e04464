package redact_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// BenchmarkResolveCached is the per-call cost of finding a shape's
// resolution once it is cached.
func BenchmarkResolveCached(b *testing.B) {
	account := tool(b, "get_account")
	r := redact.New(64)
	shape := shapeOf(b, internal)
	r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape)
	b.ReportAllocs()
	for b.Loop() {
		r.Resolve(account.OutputPlan, account.OutputRuleCompartments, shape)
	}
}

// BenchmarkApplySmall redacts a three-field answer with one denied leaf for
// a cached shape. Each iteration sets the denied field again, which Apply
// then clears; that reset is counted too, and its dynamicpb Set is the one
// allocation reported (Apply itself allocates nothing).
func BenchmarkApplySmall(b *testing.B) {
	balance := tool(b, "get_balance")
	r := redact.New(64)
	shape := shapeOf(b, internal)
	m := answer(b, balance, `{"accountId": "acct-1", "iban": "DE89370400440532013000", "minorUnits": "125000"}`)
	iban := balance.Output.Fields().ByName("iban")
	value := protoreflect.ValueOfString("DE89370400440532013000")
	if got, err := r.Apply(balance, shape, m); err != nil || got.Count != 1 {
		b.Fatalf("apply: %+v, %v", got, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Set(iban, value)
		if _, err := r.Apply(balance, shape, m); err != nil {
			b.Fatal(err)
		}
	}
}
