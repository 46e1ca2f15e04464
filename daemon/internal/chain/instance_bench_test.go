package chain_test

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// BenchmarkChainInstanceRules is the chain's cost of the instance rules:
// the fixture bank's get_customer (two require rules: equality to an
// attribute unless a compartment is held, and the tenant) with its rules
// on and off, beside BenchmarkChainInProcess, with a cached principal and
// a transport that answers at once.
func BenchmarkChainInstanceRules(b *testing.B) {
	for _, c := range []struct {
		name     string
		policies map[string]*toolv1.InstancePolicy
	}{
		{"off", map[string]*toolv1.InstancePolicy{}},
		{"on", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			r := newBankRigWith(b, c.policies, discard{})
			r.answers(b, instancetest.GetCustomer, `{"customerId":"C-1001","name":"Alice"}`)
			req := &chain.Request{HTTPMethod: "POST", Path: instancetest.GetCustomer, Authorization: "Bearer " + r.token(b, alice),
				JSON: true, Body: []byte(`{"customerId":"C-1001","tenant":"acme"}`)}
			ctx := context.Background()
			if resp := r.chain.Run(ctx, req); resp.Status != 200 {
				b.Fatalf("%d %s", resp.Status, resp.Body)
			}
			b.ReportAllocs()
			for b.Loop() {
				if resp := r.chain.Run(ctx, req); resp.Status != 200 {
					b.Fatal(resp.Status)
				}
			}
		})
	}
}
