package garmd_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAToolCrashingMidCallEndsTheCallWithItsRow(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	select {
	case <-stallStarted:
	default:
	}
	done := make(chan *answer, 1)
	go func() { done <- s.post(stallPath, s.token("public"), `{"ms": 5000}`, "Garm-Timeout-Ms", "1500") }()
	select {
	case <-stallStarted:
	case <-time.After(waitTimeout):
		t.Fatal("the call never reached the tool")
	}
	s.crashRecords()
	ans := <-done
	if ans.status != http.StatusGatewayTimeout {
		t.Fatalf("a call whose tool died ended %d %s", ans.status, ans.body)
	}
	if row := s.row(ans.eventID()); row.GetOutcome() != "error" || row.GetErrorKind() != "timeout" {
		t.Fatalf("row %v", row)
	}
	// With no service left, the next call is told at once.
	if next := s.post(stallPath, s.token("public"), `{"ms": 1}`); next.status != http.StatusServiceUnavailable {
		t.Fatalf("after the crash: %d %s", next.status, next.body)
	}
}

// The bus restarting under load: calls fail 503 while it is gone (those in
// flight when it went end at their deadline) and
// succeed again once it is back, garmd never restarts, and every answered
// call has exactly one ledger row — on the stream, or in the log where the
// stream could not take it.
func TestTheBusRestartingUnderLoadLosesNoLedgerRow(t *testing.T) {
	t.Parallel()
	s := startStack(t, withToolTimeout(time.Second))
	token := s.token("public")
	var (
		mu       sync.Mutex
		answered = map[string]int{}
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				ans := s.post(addPath, token, `{"a": 1, "b": 2}`)
				mu.Lock()
				answered[ans.eventID()] = ans.status
				mu.Unlock()
			}
		})
	}
	count := func(status int) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, st := range answered {
			if st == status {
				n++
			}
		}
		return n
	}
	eventually(t, "calls succeeding", func() bool { return count(http.StatusOK) >= 20 })
	s.bus.stop()
	eventually(t, "calls failing 503 while the bus is away", func() bool { return count(http.StatusServiceUnavailable) >= 5 })
	okBefore := count(http.StatusOK)
	s.bus.start(t)
	eventually(t, "calls succeeding again", func() bool { return count(http.StatusOK) >= okBefore+20 })
	stop.Store(true)
	wg.Wait()

	// A call in flight when the bus went away cannot know its effect: it
	// ends at its deadline (504). Every other call is answered at once.
	for id, status := range answered {
		if status != http.StatusOK && status != http.StatusServiceUnavailable && status != http.StatusGatewayTimeout {
			t.Errorf("call %s answered %d", id, status)
		}
	}
	if n := count(http.StatusGatewayTimeout); n > 4 {
		t.Errorf("%d calls timed out; only the 4 in flight when the bus went away may", n)
	}
	// Let the recorder publish what it holds, then read both destinations.
	s.shutdown()
	streamed := map[string]bool{}
	for _, e := range s.allLedgerRows() {
		streamed[e.GetEventId()] = true
	}
	logged := s.logRows()
	for id := range answered {
		switch inStream, inLog := streamed[id], logged[id] != nil; {
		case !inStream && !inLog:
			t.Errorf("call %s has no ledger row", id)
		case inStream && inLog:
			t.Errorf("call %s has two ledger rows: one on the stream and one in the log", id)
		}
	}
	for id := range logged {
		if _, ok := answered[id]; !ok {
			t.Errorf("the log holds a row of %s, which no call was answered", id)
		}
	}
	t.Logf("%d calls: %d ok, %d unavailable; %d rows on the stream, %d in the log", len(answered),
		count(http.StatusOK), count(http.StatusServiceUnavailable), len(streamed), len(logged))
}
