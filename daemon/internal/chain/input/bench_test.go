package input_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/input"
)

// BenchmarkCheckWritesSmall checks a two-field request from an INTERNAL
// caller against a plan with eight unwritable paths for that shape, cached.
func BenchmarkCheckWritesSmall(b *testing.B) {
	update := tool(b, "update_account")
	c := input.NewChecker(64)
	caller := principal(b, "runner:ci-7", internal)
	req := request(b, update, `{"accountId": "acct-1", "idempotencyKey": "run-42-step-3"}`)
	if key, err := c.CheckWrites(caller, update, req); err != nil || key != "run-42-step-3" {
		b.Fatalf("check: %q, %v", key, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CheckWrites(caller, update, req); err != nil {
			b.Fatal(err)
		}
	}
}
