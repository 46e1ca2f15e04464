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

// BenchmarkValidateValidSmall validates a three-field order that breaks no
// rule: protovalidate's own cost, and nothing of 3b's filtering.
func BenchmarkValidateValidSmall(b *testing.B) {
	order := tool(b, "place_order")
	v := validator(b, order)
	c := input.NewChecker(64)
	req := request(b, order, `{"name": "Ada", "quantity": 2, "cardToken": "t-1"}`)
	if err := c.Validate(v, order, low, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(v, order, low, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateWithViolations validates an order breaking six rules —
// standard, in a list element and a map value, a field CEL rule, a message
// CEL rule reading a hidden field and a required oneof — from an INTERNAL
// caller, so some are listed, some filtered, and messages are checked for
// echoes. Shown sets and CEL analyses are cached.
func BenchmarkValidateWithViolations(b *testing.B) {
	order := tool(b, "place_order")
	v := validator(b, order)
	c := input.NewChecker(64)
	req := request(b, order, `{"name": "ab", "quantity": 5, "limit": 2, "items": [{"name": "pen"}, {"price": "-3"}],
		"labels": {"colour": "toolong"}, "note": " hi"}`)
	if err := c.Validate(v, order, low, req); err == nil {
		b.Fatal("no violations")
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(v, order, low, req); err == nil {
			b.Fatal("no violations")
		}
	}
}
