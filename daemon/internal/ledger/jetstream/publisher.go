package jetstream

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/garm-dev/garm/daemon/internal/busoutcome"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// errCloseDeadline is why rows fell back when Close's context ended first.
var errCloseDeadline = errors.New("Close's context ended before the rows were acknowledged")

// eventsField is the field number of Batch.events.
const eventsField protowire.Number = 1

// batch is the rows bound for one subject, already encoded as a Batch
// message: each row is appended as a Batch.events field, so publishing
// needs no second encoding.
type batch struct {
	subject string
	rows    []*ledgerv1.Event
	data    []byte
	// due is when the flush interval publishes the batch.
	due  time.Time
	sent bool
}

// publisher is the one goroutine that drains a Recorder's buffer, builds
// batches and publishes them. Everything here belongs to it alone.
type publisher struct {
	r *Recorder
	// open is the batch being filled for each subject.
	open map[string]*batch
	// order holds open batches in the order they were started, which is
	// also the order they fall due; sent ones are skipped.
	order []*batch
	timer *time.Timer
	// armed is the batch the timer is set for.
	armed *batch
	seq   uint64
	enc   proto.MarshalOptions
}

func newPublisher(r *Recorder) *publisher {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &publisher{
		r:     r,
		open:  map[string]*batch{},
		timer: t,
		enc:   proto.MarshalOptions{UseCachedSize: true},
	}
}

func (p *publisher) run() {
	defer close(p.r.done)
	for {
		select {
		case e := <-p.r.rows:
			p.add(e, time.Now())
		case now := <-p.timer.C:
			p.armed = nil
			p.publishDue(now)
		case <-p.r.closing:
			p.drain()
			return
		}
		p.arm()
	}
}

// drain takes every row accepted before Close and publishes every batch.
func (p *publisher) drain() {
	for drained := false; !drained; {
		select {
		case e := <-p.r.rows:
			if p.r.ctx.Err() != nil {
				p.fallBack([]*ledgerv1.Event{e}, ReasonCloseDeadline, errCloseDeadline)
				continue
			}
			p.add(e, time.Now())
		default:
			drained = true
		}
	}
	for _, b := range p.order {
		if !b.sent {
			p.publish(b)
		}
	}
	p.order = nil
	p.timer.Stop()
}

// add puts e in its subject's batch, publishing the batch first when e would
// take it past MaxBatchBytes and afterwards when it is full.
func (p *publisher) add(e *ledgerv1.Event, now time.Time) {
	subject := wire.LedgerSubject(e.GetTenant(), e.GetApp())
	size := proto.Size(e)
	framed := protowire.SizeTag(eventsField) + protowire.SizeBytes(size)
	b := p.open[subject]
	if b != nil && len(b.data)+framed > p.r.opts.MaxBatchBytes {
		p.publish(b)
		b = nil
	}
	if b == nil {
		b = &batch{subject: subject, due: now.Add(p.r.opts.FlushInterval)}
		p.open[subject] = b
		p.order = append(p.order, b)
	}
	mark := len(b.data)
	b.data = protowire.AppendTag(b.data, eventsField, protowire.BytesType)
	b.data = protowire.AppendVarint(b.data, uint64(size))
	var err error
	if b.data, err = p.enc.MarshalAppend(b.data, e); err != nil {
		b.data = b.data[:mark]
		p.fallBack([]*ledgerv1.Event{e}, ReasonUnencodable, err)
		if len(b.rows) == 0 {
			p.forget(b)
		}
		return
	}
	b.rows = append(b.rows, e)
	if len(b.rows) >= p.r.opts.MaxBatchRows || len(b.data) >= p.r.opts.MaxBatchBytes {
		p.publish(b)
	}
}

// publishDue publishes every batch whose first row has waited the interval.
func (p *publisher) publishDue(now time.Time) {
	for len(p.order) > 0 {
		b := p.order[0]
		if !b.sent && b.due.After(now) {
			return
		}
		p.order[0] = nil
		p.order = p.order[1:]
		if !b.sent {
			p.publish(b)
		}
	}
}

// arm sets the timer for the oldest open batch.
func (p *publisher) arm() {
	for len(p.order) > 0 && p.order[0].sent {
		p.order[0] = nil
		p.order = p.order[1:]
	}
	var head *batch
	if len(p.order) > 0 {
		head = p.order[0]
	}
	if head == p.armed {
		return
	}
	p.armed = head
	if head == nil {
		p.timer.Stop()
		return
	}
	p.timer.Reset(time.Until(head.due))
}

// forget closes b: no row joins it any more and the timer skips it.
func (p *publisher) forget(b *batch) {
	b.sent = true
	if p.open[b.subject] == b {
		delete(p.open, b.subject)
	}
}

// publish offers b to the stream under one Nats-Msg-Id until it is
// acknowledged, and counts its rows recorded or lets them fall back. No
// outcome is guessed (decision 0034): a batch definitely not written — the
// bus away (garmd keeps no reconnect buffer), no stream answering, the
// server refusing it — falls back at once; a batch whose outcome is
// unknown is offered again under the same id, which the stream's duplicate
// window makes safe, until it is acknowledged, RetryHorizon has passed, or
// Close's context ends — and only then falls back, marked as possibly on
// the stream too.
func (p *publisher) publish(b *batch) {
	p.forget(b)
	defer func() { b.rows, b.data = nil, nil }()
	p.seq++
	id := p.r.idPrefix + "-" + strconv.FormatUint(p.seq, 10)
	msg := &nats.Msg{Subject: b.subject, Data: b.data, Header: nats.Header{}}
	first := time.Now()
	unknown := false
	var err error
	for {
		if err = p.r.ctx.Err(); err != nil {
			break
		}
		ctx, cancel := context.WithTimeout(p.r.ctx, p.r.opts.PublishTimeout)
		_, err = p.r.js.PublishMsg(ctx, msg,
			jetstream.WithMsgID(id),
			jetstream.WithExpectStream(wire.LedgerStream),
			jetstream.WithRetryAttempts(0),
		)
		cancel()
		if err == nil {
			p.r.counts.Recorded.Add(uint64(len(b.rows)))
			return
		}
		if !unknown && (busoutcome.NotWritten(err) || busoutcome.Refused(err)) {
			break
		}
		// Unknown, or definite only about this attempt after an earlier
		// one went unanswered: the batch may be on the stream already.
		unknown = true
		if time.Since(first) >= RetryHorizon {
			break
		}
		select {
		case <-p.r.ctx.Done():
		case <-time.After(retryPause):
		}
	}
	reason := ReasonPublishFailed
	switch {
	case p.r.ctx.Err() != nil:
		reason = ReasonCloseDeadline
	case unknown:
		reason = ReasonPublishUnknown
	}
	if p.r.ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = errCloseDeadline
	}
	p.r.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "ledger batch not published; its rows fall back to the log",
		slog.String("subject", b.subject),
		slog.String("msg_id", id),
		slog.Int("rows", len(b.rows)),
		slog.String("reason", reason),
		slog.String("error", err.Error()),
	)
	p.fallBack(b.rows, reason, err)
}

func (p *publisher) fallBack(rows []*ledgerv1.Event, reason string, err error) {
	p.r.lastErr = err
	p.r.batchFellBack.Add(uint64(len(rows)))
	for _, e := range rows {
		p.r.fallBack(e, reason)
	}
}
