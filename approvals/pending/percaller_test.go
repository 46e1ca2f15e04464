package pending_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
)

func TestACallerAskingForEverNewMaterialIsBoundedAndOthersAreNot(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	asking := func(amount int) pending.Request {
		r := payment()
		r.Material = map[string]string{"amount": strconv.Itoa(amount), "iban": "DE02120300000000202051"}
		return r
	}
	var first pending.Request
	for i := range pending.MaxRequestsPerCaller {
		r, err := s.Ask(ctx, asking(i))
		if err != nil {
			t.Fatalf("ask %d of %d: %v", i+1, pending.MaxRequestsPerCaller, err)
		}
		if i == 0 {
			first = r
		}
	}
	if _, err := s.Ask(ctx, asking(pending.MaxRequestsPerCaller)); !errors.Is(err, pending.ErrTooMany) {
		t.Fatalf("ask %d: %v, want ErrTooMany", pending.MaxRequestsPerCaller+1, err)
	}
	if open, err := s.Open(ctx, 2*pending.MaxRequestsPerCaller); err != nil || len(open) != pending.MaxRequestsPerCaller {
		t.Fatalf("the bucket holds %d open requests (%v), want %d: the refused ask left one", len(open), err, pending.MaxRequestsPerCaller)
	}
	// Asking again for material already asked about reuses its request.
	if again, err := s.Ask(ctx, asking(0)); err != nil || again.ID != first.ID {
		t.Fatalf("asking again for the first material: %q, %v; want its request %q", again.ID, err, first.ID)
	}
	// Another caller, and the same subject through another agent, are
	// counted apart.
	other := asking(pending.MaxRequestsPerCaller)
	other.Subject = "clerk"
	if _, err := s.Ask(ctx, other); err != nil {
		t.Fatalf("another subject's ask: %v", err)
	}
	delegated := asking(pending.MaxRequestsPerCaller)
	delegated.Act = []string{"agent-2"}
	if _, err := s.Ask(ctx, delegated); err != nil {
		t.Fatalf("the same subject through another agent: %v", err)
	}
}
