package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/replay"
	"github.com/garm-dev/garm/daemon/internal/replay/memory"
)

func TestAKeyIsSpentOnceAndThenRefusedAsSpent(t *testing.T) {
	s := memory.New()
	if err := s.Spend(t.Context(), "k", "call"); err != nil {
		t.Fatalf("first Spend = %v", err)
	}
	if err := s.Spend(t.Context(), "k", "another call"); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("second Spend = %v, want replay.ErrSpent", err)
	}
	if err := s.Spend(t.Context(), "k", "call"); err != nil {
		t.Fatalf("the same call again = %v, want its own spend", err)
	}
	if err := s.Spend(t.Context(), "other", "call"); err != nil {
		t.Fatalf("Spend of another key = %v", err)
	}
	if got := s.Spends(); !slices.Equal(got, []string{"k", "other"}) {
		t.Errorf("Spends = %q, want k then other", got)
	}
	if spent, err := s.Spent(t.Context(), "k"); err != nil || !spent {
		t.Errorf("Spent(k) = %v, %v", spent, err)
	}
	if spent, err := s.Spent(t.Context(), "never"); err != nil || spent {
		t.Errorf("Spent(never) = %v, %v", spent, err)
	}
	if !s.Has("k") || s.Has("never") {
		t.Errorf("Has(k) = %v, Has(never) = %v", s.Has("k"), s.Has("never"))
	}
}

func TestAFailingSpenderSpendsNothingUntilItRecovers(t *testing.T) {
	s := memory.New()
	down := errors.New("bucket unreachable")
	s.Fail(down)
	if err := s.Spend(t.Context(), "k", "call"); !errors.Is(err, down) {
		t.Fatalf("Spend while failing = %v, want %v", err, down)
	}
	if s.Has("k") || len(s.Spends()) != 0 {
		t.Fatal("a failed Spend recorded its key")
	}
	s.Fail(nil)
	if err := s.Spend(t.Context(), "k", "call"); err != nil {
		t.Fatalf("Spend after recovery = %v", err)
	}
}

func TestConcurrentSpendsOfOneKeySucceedExactlyOnce(t *testing.T) {
	s := memory.New()
	var ok, spent atomic.Int32
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			switch err := s.Spend(t.Context(), "k", fmt.Sprint("call-", i)); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, replay.ErrSpent):
				spent.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || spent.Load() != 99 {
		t.Errorf("%d spends succeeded and %d were refused as spent, want 1 and 99", ok.Load(), spent.Load())
	}
}

func TestSpendsIsACopy(t *testing.T) {
	s := memory.New()
	for i := range 3 {
		if err := s.Spend(t.Context(), fmt.Sprint(i), "call"); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Spends()
	got[0] = "changed"
	if s.Spends()[0] != "0" {
		t.Error("changing what Spends returned changed the spender")
	}
}
