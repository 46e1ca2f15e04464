package jetstream_test

import (
	"context"
	"sync/atomic"
	"testing"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// lostAnswers is a JetStream client whose first publishes reach the stream
// but whose acknowledgements are lost, as while a stream elects a leader.
type lostAnswers struct {
	jetstream.JetStream
	lose atomic.Int32
}

func (l *lostAnswers) PublishMsg(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := l.JetStream.PublishMsg(ctx, msg, opts...)
	if err == nil && l.lose.Add(-1) >= 0 {
		return nil, nats.ErrTimeout
	}
	return ack, err
}

// TestAnAuditWriteWhoseAnswerWasLostIsMadeAgainAndStoredOnce is the
// defect of a node loss: an intent not acknowledged while the audit stream
// elected a leader refused the call, though the row may have landed. The
// write is made again under its Nats-Msg-Id within its bound, and lands
// once.
func TestAnAuditWriteWhoseAnswerWasLostIsMadeAgainAndStoredOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	lossy := &lostAnswers{JetStream: js}
	lossy.lose.Store(2)
	sink := auditjs.New(lossy, auditjs.Options{})
	if err := sink.Write(t.Context(), auditRow("0190-lost-answer", "intent")); err != nil {
		t.Fatalf("a write whose first answers were lost: %v", err)
	}
	if got := readStream(t, js); len(got) != 1 || got[0].msgID != "0190-lost-answer.intent" {
		t.Fatalf("the stream holds %v; want the one row, once", got)
	}
}
