package jetstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/garm-dev/garm/daemon/internal/audit"
	"github.com/garm-dev/garm/daemon/internal/busoutcome"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// DefaultTimeout bounds a write whose Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// Bounds of one write's attempts: an attempt whose answer is lost is made
// again within the write's own bound.
const (
	attemptTimeout = time.Second
	retryPause     = 50 * time.Millisecond
)

// Options tune a Sink. Every field may be left zero.
type Options struct {
	// Timeout bounds each Write, acknowledgement included; the caller's
	// context may end it sooner. Zero or negative takes DefaultTimeout.
	Timeout time.Duration
	// Logger receives a debug line when the stream already held a row
	// (a retried write). Nil logs nothing; failures are returned, not
	// logged, because the chain decides what they mean.
	Logger *slog.Logger
}

// Sink publishes each audit row to GARM_AUDIT and waits for its
// acknowledgement. It is safe for concurrent use.
type Sink struct {
	js   jetstream.JetStream
	opts Options
}

// New is a Sink publishing through js, which must not be nil; whoever made
// js drains and closes its connection.
func New(js jetstream.JetStream, o Options) *Sink {
	if js == nil {
		panic("audit/jetstream: New needs a JetStream context")
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sink{js: js, opts: o}
}

// Write publishes e to wire.AuditSubject(e.Tenant, e.App) and returns once
// GARM_AUDIT has acknowledged it, or with why it did not. A row without an
// event id or an outcome is refused unwritten: its message id would collide
// with other rows'. Write marshals e before it returns and keeps nothing.
//
// The caller's ctx bounds the write as well as Options.Timeout; a chain that
// must write the outcome row of a call whose caller has gone passes a
// context that outlives the request.
func (s *Sink) Write(ctx context.Context, e *ledgerv1.Event) error {
	if e == nil {
		return errors.New("audit/jetstream: Write was given no row")
	}
	id, outcome := e.GetEventId(), e.GetOutcome()
	if id == "" || outcome == "" {
		return fmt.Errorf("audit/jetstream: a row needs an event id and an outcome to be told apart from others (event id %q, outcome %q)", id, outcome)
	}
	data, err := proto.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit/jetstream: the %s row of event %s does not marshal: %w", outcome, id, err)
	}
	msgID := MsgID(e)
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	msg := &nats.Msg{Subject: wire.AuditSubject(e.GetTenant(), e.GetApp()), Data: data}
	// No outcome is guessed (decision 0034): a write definitely not made
	// fails at once; one whose answer was lost is made again under the same
	// Nats-Msg-Id, which the stream's duplicate window recognises, until it
	// is acknowledged or ctx ends.
	var ack *jetstream.PubAck
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, attemptTimeout)
		ack, err = s.js.PublishMsg(attempt, msg,
			jetstream.WithMsgID(msgID),
			jetstream.WithExpectStream(wire.AuditStream),
			jetstream.WithRetryAttempts(0),
		)
		cancelAttempt()
		if err == nil || busoutcome.NotWritten(err) || busoutcome.Refused(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryPause):
		}
	}
	if err != nil {
		return fmt.Errorf("audit/jetstream: the %s row of event %s was not acknowledged by %s: %w", outcome, id, wire.AuditStream, err)
	}
	if ack.Duplicate {
		s.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "audit row already held; the stream kept the first write",
			slog.String("event_id", id),
			slog.String("outcome", outcome),
			slog.String("msg_id", msgID),
		)
	}
	return nil
}

// MsgID is the Nats-Msg-Id of e's audit message: one per event id and
// outcome, so the intent and the outcome of a call are two messages and a
// retried write of either is one.
func MsgID(e *ledgerv1.Event) string { return e.GetEventId() + "." + e.GetOutcome() }

var _ audit.Sink = (*Sink)(nil)
