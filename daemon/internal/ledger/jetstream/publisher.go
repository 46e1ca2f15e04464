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
	due time.Time
	// shipped is set once the batch is handed to the publisher (or
	// forgotten): no row joins it any more.
	shipped bool
}

// batcher is where recorded rows wait for the publisher: the callers that
// record them encode them into their subject's open batch themselves, under
// Recorder.mu, and hand the publisher whole batches. A call therefore costs
// no hand-off to another goroutine; the publisher is woken once per full
// batch, or once per flush interval (docs/decisions/0065).
type batcher struct {
	opts Options
	enc  proto.MarshalOptions
	// open is the batch being filled for each subject.
	open map[string]*batch
	// order holds open batches in the order they were started, which is
	// also the order they fall due; shipped ones are skipped.
	order []*batch
	// ready is the batches handed to the publisher, in the order they
	// were shipped, which it publishes in that order.
	ready []*batch
	// waiting counts the rows in open and ready batches: the buffer
	// Options.BufferRows bounds.
	waiting int
	// spareData and spareRows are published batches' buffers, reused by
	// the next batches (at most maxSpareBatches of each).
	spareData [][]byte
	spareRows [][]*ledgerv1.Event
	spare     []*batch // the ready slice the publisher handed back
	// last is the subject of the last row's tenant and app: a plane
	// writes rows of one app, most often of one tenant, and the subject
	// is then not built again for every row.
	last struct{ tenant, app, subject string }
}

// maxSpareBatches bounds the buffers kept for reuse: one per subject
// usually suffices.
const maxSpareBatches = 4

func newBatcher(o Options) batcher {
	return batcher{opts: o, enc: proto.MarshalOptions{UseCachedSize: true}, open: map[string]*batch{}}
}

// add puts e, of encoded size size, in its subject's batch, shipping the
// batch first when e would take it past MaxBatchBytes and afterwards when
// it is full. It says whether the publisher must be woken: a batch was
// shipped, or the batch started is the only open one (a flush interval
// starts, and no timer covers it). An error says e does not encode; it is in
// no batch.
func (q *batcher) add(e *ledgerv1.Event, size int, now time.Time) (wake bool, err error) {
	subject := q.subject(e.GetTenant(), e.GetApp())
	framed := protowire.SizeTag(eventsField) + protowire.SizeBytes(size)
	b := q.open[subject]
	if b != nil && len(b.data)+framed > q.opts.MaxBatchBytes {
		q.ship(b)
		b, wake = nil, true
	}
	if b == nil {
		b = q.newBatch(subject, now.Add(q.opts.FlushInterval))
		wake = wake || len(q.open) == 0
		q.open[subject] = b
		q.order = append(q.order, b)
	}
	mark := len(b.data)
	b.data = protowire.AppendTag(b.data, eventsField, protowire.BytesType)
	b.data = protowire.AppendVarint(b.data, uint64(size))
	if b.data, err = q.enc.MarshalAppend(b.data, e); err != nil {
		b.data = b.data[:mark]
		if len(b.rows) == 0 {
			q.forget(b)
		}
		return wake, err
	}
	b.rows = append(b.rows, e)
	q.waiting++
	if len(b.rows) >= q.opts.MaxBatchRows || len(b.data) >= q.opts.MaxBatchBytes {
		q.ship(b)
		wake = true
	}
	return wake, nil
}

// subject is wire.LedgerSubject of tenant and app.
func (q *batcher) subject(tenant, app string) string {
	if q.last.subject == "" || q.last.tenant != tenant || q.last.app != app {
		q.last.tenant, q.last.app, q.last.subject = tenant, app, wire.LedgerSubject(tenant, app)
	}
	return q.last.subject
}

// ship hands b to the publisher.
func (q *batcher) ship(b *batch) {
	q.forget(b)
	q.ready = append(q.ready, b)
}

// forget closes b: no row joins it any more and the timer skips it.
func (q *batcher) forget(b *batch) {
	b.shipped = true
	if q.open[b.subject] == b {
		delete(q.open, b.subject)
	}
}

// shipDue ships every open batch due by now (every one when all is set),
// and returns when the next open batch falls due (zero when none is open).
func (q *batcher) shipDue(now time.Time, all bool) time.Time {
	for len(q.order) > 0 {
		b := q.order[0]
		if !b.shipped && !all && b.due.After(now) {
			return b.due
		}
		q.order[0] = nil
		q.order = q.order[1:]
		if !b.shipped {
			q.ship(b)
		}
	}
	return time.Time{}
}

// takeReady hands the publisher the shipped batches; their rows no longer
// wait in the buffer.
func (q *batcher) takeReady() []*batch {
	ready := q.ready
	q.ready, q.spare = q.spare[:0], nil
	for _, b := range ready {
		q.waiting -= len(b.rows)
	}
	return ready
}

// newBatch is an empty batch for subject, on a published batch's buffers
// when one is spare.
func (q *batcher) newBatch(subject string, due time.Time) *batch {
	b := &batch{subject: subject, due: due}
	if n := len(q.spareData); n > 0 {
		b.data, q.spareData = q.spareData[n-1], q.spareData[:n-1]
	}
	if n := len(q.spareRows); n > 0 {
		b.rows, q.spareRows = q.spareRows[n-1], q.spareRows[:n-1]
	}
	return b
}

// recycle keeps published batches' buffers for the next batches: the
// stream has their bytes, or the log their rows, by now. A buffer beyond a
// full batch (a row larger than MaxBatchBytes on its own) is not kept.
func (q *batcher) recycle(published []*batch) {
	for _, b := range published {
		if cap(b.data) > 0 && cap(b.data) <= 2*q.opts.MaxBatchBytes && len(q.spareData) < maxSpareBatches {
			q.spareData = append(q.spareData, b.data[:0])
		}
		if cap(b.rows) > 0 && cap(b.rows) <= 2*q.opts.MaxBatchRows && len(q.spareRows) < maxSpareBatches {
			clear(b.rows)
			q.spareRows = append(q.spareRows, b.rows[:0])
		}
		b.rows, b.data = nil, nil
	}
	clear(published)
	q.spare = published[:0]
}

// publisher is the one goroutine that publishes the batches the recording
// callers ship, and ships the open ones their flush interval makes due.
type publisher struct {
	r     *Recorder
	timer *time.Timer
	// armed is when the timer is set to fire; zero when it is stopped.
	armed time.Time
	seq   uint64
}

func newPublisher(r *Recorder) *publisher {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &publisher{r: r, timer: t}
}

func (p *publisher) run() {
	defer close(p.r.done)
	for {
		select {
		case <-p.r.wake:
		case <-p.timer.C:
			p.armed = time.Time{}
		case <-p.r.closing:
			p.drain()
			return
		}
		p.publishReady(false)
	}
}

// publishReady ships what is due (everything when all is set) and
// publishes every shipped batch, in order, until none is left; then sets
// the timer for the next open batch.
func (p *publisher) publishReady(all bool) {
	for {
		p.r.mu.Lock()
		next := p.r.batches.shipDue(time.Now(), all)
		ready := p.r.batches.takeReady()
		p.r.mu.Unlock()
		if len(ready) == 0 {
			p.arm(next)
			return
		}
		for _, b := range ready {
			p.publish(b)
		}
		p.r.mu.Lock()
		p.r.batches.recycle(ready)
		p.r.mu.Unlock()
	}
}

// drain publishes every batch of the rows accepted before Close.
func (p *publisher) drain() {
	p.publishReady(true) // Close set closed: no row joins a batch now
	p.timer.Stop()
}

// arm sets the timer for next, the oldest open batch's due time; zero
// stops it.
func (p *publisher) arm(next time.Time) {
	if next.Equal(p.armed) {
		return
	}
	p.armed = next
	if next.IsZero() {
		p.timer.Stop()
		return
	}
	p.timer.Reset(time.Until(next))
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
	p.r.batchFellBack.Add(uint64(len(rows)))
	p.r.mu.Lock()
	p.r.lastErr = err
	p.r.mu.Unlock()
	for _, e := range rows {
		p.r.fallBack(e, reason)
	}
}
