package pending_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newStore(t *testing.T) (*pending.Store, jetstream.JetStream) {
	t.Helper()
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	s, err := pending.Ensure(bounded(t), js, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s, js
}

func payment() pending.Request {
	return pending.Request{
		Tool:                 "bank.payments.v1.Payments.Pay",
		ToolTitle:            "Pay",
		ApproverMinClearance: "CONFIDENTIAL",
		ApproverCompartments: []string{"treasury", "finance"},
		DistinctApprover:     true,
		MaxGrantAgeSeconds:   300,
		Subject:              "treasurer",
		Act:                  []string{"agent-1"},
		Tenant:               "acme",
		Material:             map[string]string{"amount": "100", "iban": "DE02120300000000202051"},
		EventID:              "ev-1",
	}
}

func TestAnAskIsRecordedWithItsDigestAndExpiryAndReadBack(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if !pending.ValidID(r.ID) {
		t.Fatalf("Ask made id %q, which ValidID refuses", r.ID)
	}
	if want := wire.MaterialDigest(payment().Material); r.MaterialDigest != want {
		t.Errorf("digest %q, want %q", r.MaterialDigest, want)
	}
	if got := r.Expires.Sub(r.Created); got != 300*time.Second {
		t.Errorf("the request lives %v, want its grant age", got)
	}
	if strings.Join(r.ApproverCompartments, ",") != "finance,treasury" {
		t.Errorf("compartments not sorted: %v", r.ApproverCompartments)
	}
	got, d, err := s.Get(ctx, r.ID)
	if err != nil || d != nil {
		t.Fatalf("Get: %v, decision %v", err, d)
	}
	if got.Subject != "treasurer" || got.Material["iban"] != "DE02120300000000202051" || !got.Created.Equal(r.Created) {
		t.Errorf("read back %+v", got)
	}
	if st := got.Status(d, time.Now()); st != pending.StatusPending {
		t.Errorf("status %q, want pending", st)
	}
}

func TestTheSameCallerAskingForTheSameMaterialReusesTheOpenRequest(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	first, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID {
		t.Errorf("a second ask made request %s beside %s", again.ID, first.ID)
	}
	for name, change := range map[string]func(*pending.Request){
		"another subject": func(r *pending.Request) { r.Subject = "clerk" },
		"another actor":   func(r *pending.Request) { r.Act = []string{"agent-2"} },
		"no actor":        func(r *pending.Request) { r.Act = nil },
		"another tenant":  func(r *pending.Request) { r.Tenant = "globex" },
		"another tool":    func(r *pending.Request) { r.Tool = "bank.payments.v1.Payments.Refund" },
		"another amount": func(r *pending.Request) {
			r.Material = map[string]string{"amount": "101", "iban": "DE02120300000000202051"}
		},
		"fields run together": func(r *pending.Request) { r.Subject, r.Tenant = "acmetreasurer", "" },
	} {
		r := payment()
		change(&r)
		other, err := s.Ask(ctx, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if other.ID == first.ID {
			t.Errorf("%s: reused the request of another caller or material", name)
		}
	}
	open, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 8 {
		t.Errorf("the inbox holds %d requests, want 8", len(open))
	}
}

func TestConcurrentAsksOfOneCallerLeaveOneOpenRequest(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	ids := make([]string, 6)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := s.Ask(ctx, payment())
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.ID
		}()
	}
	wg.Wait()
	open, err := s.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		t.Fatalf("%d open requests after concurrent asks, want 1", len(open))
	}
	for _, id := range ids {
		if id != open[0].ID {
			t.Errorf("an ask answered %s, not the open request %s", id, open[0].ID)
		}
	}
}

func TestADecidedRequestIsNotReusedAndLeavesTheInbox(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	first, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: first.ID, Verdict: pending.Denied, Approver: "cfo"}); err != nil {
		t.Fatal(err)
	}
	r, d, err := s.Get(ctx, first.ID)
	if err != nil || d == nil || d.Verdict != pending.Denied || d.Decided.IsZero() {
		t.Fatalf("Get after a denial: %v, %+v", err, d)
	}
	if st := r.Status(d, time.Now()); st != pending.StatusDenied {
		t.Errorf("status %q, want denied", st)
	}
	again, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if again.ID == first.ID {
		t.Error("an ask after a denial reused the denied request")
	}
	again2, err := s.Ask(ctx, payment())
	if err != nil || again2.ID != again.ID {
		t.Errorf("the new request is not reused in turn: %v, %s vs %s", err, again2.ID, again.ID)
	}
	open, err := s.Open(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].ID != again.ID {
		t.Errorf("the inbox holds %v, want only the new request", open)
	}
}

func TestAnApprovalCarriesItsGrantAndIsRecordedOnce(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "cfo", Grant: "a.b.c"}); err != nil {
		t.Fatal(err)
	}
	_, d, err := s.Get(ctx, r.ID)
	if err != nil || d == nil || d.Grant != "a.b.c" || d.Approver != "cfo" {
		t.Fatalf("Get after approval: %v %+v", err, d)
	}
	err = s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Denied, Approver: "cfo"})
	if !errors.Is(err, pending.ErrDecided) {
		t.Errorf("a second decision: %v, want ErrDecided", err)
	}
	if _, d, _ := s.Get(ctx, r.ID); d == nil || d.Verdict != pending.Approved {
		t.Errorf("the second decision changed the first: %+v", d)
	}
}

func TestConcurrentDecisionsRecordOne(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Decide(ctx, pending.Decision{ID: r.ID, Verdict: pending.Approved, Approver: "cfo", Grant: "g"})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, pending.ErrDecided):
			t.Errorf("a losing decision: %v, want ErrDecided", err)
		}
	}
	if won != 1 {
		t.Errorf("%d decisions recorded, want 1", won)
	}
}
