package memory_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/audit/memory"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

func row(id, outcome string) *ledgerv1.Event {
	return &ledgerv1.Event{EventId: id, Outcome: outcome, Tenant: "acme", App: "garmd", Tags: map[string]string{"k": "v"}}
}

func TestRowsAreCopiesOfEveryWriteInOrder(t *testing.T) {
	s := memory.New()
	e := row("a", "intent")
	if err := s.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	// The chain goes on filling the row it wrote ahead of the call.
	e.Outcome = "ok"
	e.Tags["k"] = "changed"
	if err := s.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	rows := s.Rows()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want every write kept, repeats included: %v", len(rows), rows)
	}
	if rows[0].GetOutcome() != "intent" || rows[0].GetTags()["k"] != "v" {
		t.Errorf("changing the row after Write changed the kept one: %v", rows[0])
	}
	if rows[1].GetOutcome() != "ok" || rows[2].GetOutcome() != "ok" {
		t.Errorf("rows %v, want intent, ok, ok", rows)
	}
	rows[0].EventId = "changed"
	if s.Rows()[0].GetEventId() != "a" {
		t.Error("changing a returned row changed the kept one")
	}
}

func TestFailRefusesWritesUntilFailNil(t *testing.T) {
	s := memory.New()
	down := errors.New("audit trail down")
	s.Fail(down)
	if err := s.Write(t.Context(), row("a", "intent")); !errors.Is(err, down) {
		t.Fatalf("Write while failing = %v, want %v", err, down)
	}
	s.Fail(nil)
	if err := s.Write(t.Context(), row("b", "intent")); err != nil {
		t.Fatalf("Write after Fail(nil) = %v", err)
	}
	if rows := s.Rows(); len(rows) != 1 || rows[0].GetEventId() != "b" {
		t.Errorf("rows %v, want only b: a failed write keeps nothing", rows)
	}
}

func TestAWriteWhoseContextIsDoneFailsLikeAnUnreachableSink(t *testing.T) {
	s := memory.New()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Write(ctx, row("a", "intent")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want context.Canceled", err)
	}
	if err := s.Write(t.Context(), nil); err == nil {
		t.Error("Write(nil) succeeded")
	}
	if n := len(s.Rows()); n != 0 {
		t.Errorf("%d rows kept, want none", n)
	}
}

func TestWritesFromManyGoroutinesAreAllKept(t *testing.T) {
	s := memory.New()
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Write(t.Context(), row(fmt.Sprintf("%d-%d", w, i), "intent")); err != nil {
					t.Error(err)
				}
				if i%50 == 0 {
					s.Fail(nil)
				}
			}
		})
	}
	wg.Wait()
	if n := len(s.Rows()); n != writers*each {
		t.Errorf("kept %d rows, want %d", n, writers*each)
	}
}
