package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/ledger/memory"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 10 * time.Second

func row(id string) *ledgerv1.Event {
	return &ledgerv1.Event{EventId: id, Tenant: "acme", App: "garmd", Outcome: "ok", Tags: map[string]string{"k": "v"}}
}

func TestRowsAreCopiesInRecordOrder(t *testing.T) {
	r := memory.New()
	r.Record(row("a"))
	r.Record(row("b"))
	r.Record(nil)
	rows := r.Rows()
	if len(rows) != 2 || rows[0].GetEventId() != "a" || rows[1].GetEventId() != "b" {
		t.Fatalf("rows %v, want a then b", rows)
	}
	rows[0].EventId = "changed"
	rows[0].Tags["k"] = "changed"
	again := r.Rows()
	if again[0].GetEventId() != "a" || again[0].GetTags()["k"] != "v" {
		t.Errorf("changing a returned row changed the kept one: %v", again[0])
	}
	if got := r.Counts().Recorded.Load(); got != 2 {
		t.Errorf("recorded %d, want 2", got)
	}
}

func TestWaitForReturnsOnceEnoughRowsArrive(t *testing.T) {
	r := memory.New()
	const n = 100
	go func() {
		for i := range n {
			r.Record(row(fmt.Sprint(i)))
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	rows, err := r.WaitFor(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < n {
		t.Errorf("WaitFor returned %d rows, want at least %d", len(rows), n)
	}
}

func TestWaitForSaysHowManyArrivedWhenTheContextEnds(t *testing.T) {
	r := memory.New()
	r.Record(row("only"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := r.WaitFor(ctx, 2)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitFor = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "1 of 2") {
		t.Errorf("the error does not say how many rows arrived: %v", err)
	}
}

func TestResetForgetsTheRowsButNotTheCounts(t *testing.T) {
	r := memory.New()
	r.Record(row("a"))
	r.Reset()
	if rows := r.Rows(); len(rows) != 0 {
		t.Errorf("%d rows after Reset, want none", len(rows))
	}
	r.Record(row("b"))
	if rows := r.Rows(); len(rows) != 1 || rows[0].GetEventId() != "b" {
		t.Errorf("rows after Reset and a record: %v", rows)
	}
	if got := r.Counts().Recorded.Load(); got != 2 {
		t.Errorf("recorded %d, want 2", got)
	}
}

func TestRowsRecordedFromManyGoroutinesAndAfterCloseAreAllKept(t *testing.T) {
	r := memory.New()
	const writers, each = 8, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				r.Record(row(fmt.Sprintf("%d-%d", w, i)))
			}
		})
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if _, err := r.WaitFor(ctx, writers*each/2); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	r.Record(row("after-close"))
	seen := map[string]bool{}
	for _, e := range r.Rows() {
		seen[e.GetEventId()] = true
	}
	if len(seen) != writers*each+1 || !seen["after-close"] {
		t.Errorf("kept %d distinct rows, want %d including after-close", len(seen), writers*each+1)
	}
}
