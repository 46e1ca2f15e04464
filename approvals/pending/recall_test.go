package pending_test

import (
	"errors"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
)

func TestARetryRecallsOnlyItsOwnCallersDecisionOnTheSameMaterial(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if got, dec, err := s.Recall(ctx, payment()); err != nil || got.ID != r.ID || dec != nil {
		t.Fatalf("an undecided request recalls %q %v %v, want it without a decision", got.ID, dec, err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Denied, Approver: "adam"}); err != nil {
		t.Fatal(err)
	}
	others := map[string]func(*pending.Request){
		"another subject": func(q *pending.Request) { q.Subject = "clerk" },
		"another tenant":  func(q *pending.Request) { q.Tenant = "globex" },
		"another agent":   func(q *pending.Request) { q.Act = []string{"agent-2"} },
		"no agent":        func(q *pending.Request) { q.Act = nil },
		"another tool":    func(q *pending.Request) { q.Tool = "bank.v1.Payments.Refund" },
		"other material": func(q *pending.Request) {
			q.Material = map[string]string{"amount": "1", "iban": "DE02120300000000202051"}
		},
	}
	for name, change := range others {
		q := payment()
		change(&q)
		if got, dec, err := s.Recall(ctx, q); !errors.Is(err, pending.ErrNotFound) {
			t.Errorf("%s recalls %q %v %v", name, got.ID, dec, err)
		}
	}
	for range 2 {
		got, dec, err := s.Recall(ctx, payment())
		if err != nil || got.ID != r.ID || dec == nil || dec.Verdict != pending.Denied {
			t.Fatalf("the denied request recalls %q %v %v, want it denied on every retry", got.ID, dec, err)
		}
	}
	pending.SetClock(s, func() time.Time { return r.Expires })
	if got, dec, err := s.Recall(ctx, payment()); !errors.Is(err, pending.ErrNotFound) {
		t.Errorf("an expired decision recalls %q %v %v", got.ID, dec, err)
	}
}

func TestAnApprovedRequestIsRecalledOnceThenANewOneIsAsked(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "adam", Grant: "g.r.ant"}); err != nil {
		t.Fatal(err)
	}
	got, dec, err := s.Recall(ctx, payment())
	if err != nil || got.ID != r.ID || dec == nil || dec.Grant != "g.r.ant" {
		t.Fatalf("the approved request recalls %q %v %v", got.ID, dec, err)
	}
	if again, dec, err := s.Recall(ctx, payment()); !errors.Is(err, pending.ErrNotFound) {
		t.Fatalf("an approval was recalled twice: %q %v %v", again.ID, dec, err)
	}
	next, err := s.Ask(ctx, payment())
	if err != nil || next.ID == r.ID {
		t.Fatalf("the ask after the recall: %q %v, want a new request", next.ID, err)
	}
	if again, err := s.Ask(ctx, payment()); err != nil || again.ID != next.ID {
		t.Fatalf("the new request is not reused: %q %v, want %q", again.ID, err, next.ID)
	}
}
