package garmd_test

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// design 7.11: once shutdown begins the listener stops accepting, the call in
// flight finishes, then the ledger flushes. New calls are refused while the
// call in flight is still in the tool's hands — during the drain, not only
// after it — and the call in flight still answers and is recorded.
func TestShutdownLetsCallsInFlightFinishRefusesNewOnesAndFlushesTheLedger(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	token := s.token("operator")
	select {
	case <-stallStarted: // left by an earlier test
	default:
	}
	release := make(chan struct{})
	stallHeld.Store(&release)
	t.Cleanup(func() { stallHeld.Store(nil) })

	inFlight := make(chan *answer, 1)
	go func() { inFlight <- s.post(stallPath, token, `{"ms": 1}`) }()
	select {
	case <-stallStarted:
	case <-time.After(waitTimeout):
		t.Fatal("the call never reached the tool")
	}
	s.stop()
	s.stop = nil

	// A new connection, so no kept-alive one can answer for the listener.
	fresh := &http.Client{Timeout: waitTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	refusedAtDial := func(err error) bool {
		op := (*net.OpError)(nil)
		return errors.As(err, &op) && op.Op == "dial"
	}
	eventually(t, "new calls being refused", func() bool {
		resp, err := fresh.Post(s.url+addPath, "application/json", strings.NewReader(`{"a": 1, "b": 2}`))
		if err == nil {
			resp.Body.Close()
			return false
		}
		// Until the listener is closed, the kernel may still queue a
		// connection in its backlog and reset it when the listener
		// closes (EOF): not refused yet, and not answered either.
		return refusedAtDial(err)
	})
	// Once refused, refused for good: every new connection is refused
	// while connecting. A connection taken and then dropped, or answered,
	// would be a call garmd accepted during the drain.
	for i := range 5 {
		resp, err := fresh.Post(s.url+addPath, "application/json", strings.NewReader(`{"a": 1, "b": 2}`))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("new call %d after the listener refused one was answered %d during the drain", i+1, resp.StatusCode)
		}
		if !refusedAtDial(err) {
			t.Fatalf("new call %d after the listener refused one failed with %v, want the connection not accepted", i+1, err)
		}
	}
	// Still draining: the call in flight holds garmd up.
	select {
	case ans := <-inFlight:
		t.Fatalf("the call in flight ended (%d %s) before it was released", ans.status, ans.body)
	case err := <-s.done:
		t.Fatalf("garmd stopped (%v) with a call still in flight", err)
	default:
	}

	close(release)
	ans := <-inFlight
	if ans.status != http.StatusOK {
		t.Fatalf("the call in flight ended %d %s", ans.status, ans.body)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("garmd did not stop")
	}
	// The row of the call in flight was flushed to the stream before the
	// bus closed.
	if row := s.row(ans.eventID()); row.GetOutcome() != "ok" || row.GetTool() != "fix.v1.stall" {
		t.Fatalf("row %v", row)
	}
}
