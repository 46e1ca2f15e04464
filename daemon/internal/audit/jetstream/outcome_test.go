package jetstream_test

import (
	"testing"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/busoutcome/busoutcometest"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

// TestAnAuditWriteWhoseAnswerWasLostIsMadeAgainAndStoredOnce is the
// defect of a node loss: an intent not acknowledged while the audit stream
// elected a leader refused the call, though the row may have landed. The
// write is made again under its Nats-Msg-Id within its bound, and lands
// once.
func TestAnAuditWriteWhoseAnswerWasLostIsMadeAgainAndStoredOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	lossy := busoutcometest.Losing(js, 2)
	sink := auditjs.New(lossy, auditjs.Options{})
	if err := sink.Write(t.Context(), auditRow("0190-lost-answer", "intent")); err != nil {
		t.Fatalf("a write whose first answers were lost: %v", err)
	}
	if got := readStream(t, js); len(got) != 1 || got[0].msgID != "0190-lost-answer.intent" {
		t.Fatalf("the stream holds %v; want the one row, once", got)
	}
}
