//go:build !race

// Under the race detector sync.Pool drops pooled values on purpose, so this
// count is pinned only without it (make test's non-race step).

package chain_test

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// TestTheBankRulesAddAtMostFourAllocationsToTheChain is the budget of issue
// 31 (decision 0097): get_customer's two require rules, on vs off, cost the
// whole chain at most 4 allocations.
func TestTheBankRulesAddAtMostFourAllocationsToTheChain(t *testing.T) {
	count := func(policies map[string]*toolv1.InstancePolicy) float64 {
		r := newBankRigWith(t, policies, discard{})
		r.answers(t, instancetest.GetCustomer, `{"customerId":"C-1001","name":"Alice"}`)
		req := &chain.Request{HTTPMethod: "POST", Path: instancetest.GetCustomer, Authorization: "Bearer " + r.token(t, alice),
			JSON: true, Body: []byte(`{"customerId":"C-1001","tenant":"acme"}`)}
		ctx := context.Background()
		return testing.AllocsPerRun(200, func() {
			if resp := r.chain.Run(ctx, req); resp.Status != 200 {
				t.Fatalf("%d %s", resp.Status, resp.Body)
			}
		})
	}
	off, on := count(map[string]*toolv1.InstancePolicy{}), count(nil)
	if on-off > 4 {
		t.Fatalf("the bank's rules cost the chain %v allocations (%v on, %v off), want ≤ 4", on-off, on, off)
	}
}
