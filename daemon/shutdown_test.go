package garmd_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestShutdownLetsCallsInFlightFinishRefusesNewOnesAndFlushesTheLedger(t *testing.T) {
	s := startStack(t)
	token := s.token("operator")
	select {
	case <-stallStarted: // left by an earlier test
	default:
	}
	inFlight := make(chan *answer, 1)
	go func() { inFlight <- s.post(stallPath, token, `{"ms": 800}`) }()
	select {
	case <-stallStarted:
	case <-time.After(waitTimeout):
		t.Fatal("the call never reached the tool")
	}
	s.stop()
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
	s.stop = nil
	if _, err := http.Post(s.url+addPath, "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("garmd accepted a call after shutdown")
	}
	// The row of the last call was flushed to the stream before the bus
	// closed.
	if row := s.row(ans.eventID()); row.GetOutcome() != "ok" || row.GetTool() != "fix.v1.stall" {
		t.Fatalf("row %v", row)
	}
}
