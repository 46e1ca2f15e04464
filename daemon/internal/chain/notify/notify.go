package notify

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// Defaults for the zero values of Options.
const (
	DefaultQueueSize = 1024
	DefaultTimeout   = 5 * time.Second
)

// Why a row was not published, as the "reason" of its log line says.
const (
	// ReasonQueueFull: the row arrived while the queue was full.
	ReasonQueueFull = "queue_full"
	// ReasonClosed: the row arrived after Close.
	ReasonClosed = "closed"
	// ReasonCloseDeadline: Close's context ended before the row was
	// published.
	ReasonCloseDeadline = "close_deadline"
	// ReasonPublishFailed: the stream did not acknowledge the row in time.
	ReasonPublishFailed = "publish_failed"
	// ReasonUnencodable: the row does not marshal (a string that is not
	// UTF-8).
	ReasonUnencodable = "unencodable"
)

// Options tune a Notifier. Every field may be left zero; a negative number
// takes its default too.
type Options struct {
	// QueueSize is how many rows may wait for the publisher; a row beyond
	// it is dropped. Default DefaultQueueSize.
	QueueSize int
	// Timeout bounds each publish, acknowledgement included. Default
	// DefaultTimeout.
	Timeout time.Duration
	// Logger receives one warning per row not published. Nil logs nothing.
	Logger *slog.Logger
}

// Counts are a Notifier's counters, read by metrics: rows the stream
// acknowledged, rows it did not, and rows never offered to it (queue full,
// after Close, or cut off by Close's context).
type Counts struct {
	Published, Failed, Dropped uint64
}

// Notifier publishes completed rows to GARM_NOTIFY from a bounded queue. It
// is safe for concurrent use.
type Notifier struct {
	js   jetstream.JetStream
	opts Options

	published, failed, dropped atomic.Uint64
	// cutOff counts the dropped rows Close's context cut off, so Close can
	// say how many it gave up on.
	cutOff atomic.Uint64

	// mu orders Notify against Close: a row is either queued before Close
	// drains the queue, or dropped as closed.
	mu     sync.RWMutex
	closed bool
	queue  chan *ledgerv1.Event

	// ctx bounds every publish; Close cancels it when its own context ends.
	ctx     context.Context
	cancel  context.CancelFunc
	closing chan struct{} // closed by the first Close
	done    chan struct{} // closed when the publisher has returned
}

// New starts a Notifier publishing through js, which must not be nil;
// whoever made js drains and closes its connection after Close.
func New(js jetstream.JetStream, o Options) *Notifier {
	if js == nil {
		panic("notify: New needs a JetStream context")
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{
		js:      js,
		opts:    o,
		queue:   make(chan *ledgerv1.Event, o.QueueSize),
		ctx:     ctx,
		cancel:  cancel,
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	go n.run()
	return n
}

// Notify queues e, a completed row, for publication and returns at once; it
// never waits on the network or on the queue. A full queue or a closed
// Notifier drops the row, logged and counted. The row must not be changed
// afterwards. A nil e is not a row and is ignored.
func (n *Notifier) Notify(e *ledgerv1.Event) {
	if e == nil {
		return
	}
	n.mu.RLock()
	if n.closed {
		n.mu.RUnlock()
		n.drop(e, ReasonClosed)
		return
	}
	select {
	case n.queue <- e:
		n.mu.RUnlock()
	default:
		n.mu.RUnlock()
		n.drop(e, ReasonQueueFull)
	}
}

// Close publishes every row queued before it, waiting until ctx is done at
// most; rows still unpublished then are dropped, and the error says how
// many. Rows notified afterwards are dropped at once. Close may be called
// more than once.
func (n *Notifier) Close(ctx context.Context) error {
	n.mu.Lock()
	first := !n.closed
	n.closed = true
	n.mu.Unlock()
	before := n.cutOff.Load()
	if first {
		close(n.closing)
	}
	select {
	case <-n.done:
	case <-ctx.Done():
		n.cancel()
		<-n.done
	}
	n.cancel()
	if cut := n.cutOff.Load() - before; first && cut > 0 {
		return fmt.Errorf("notify: %d rows were not published before Close's context ended: %w", cut, ctx.Err())
	}
	return nil
}

// Counts is a snapshot of the counters.
func (n *Notifier) Counts() Counts {
	return Counts{Published: n.published.Load(), Failed: n.failed.Load(), Dropped: n.dropped.Load()}
}

// run is the one publisher goroutine.
func (n *Notifier) run() {
	defer close(n.done)
	for {
		select {
		case e := <-n.queue:
			n.publish(e)
		case <-n.closing:
			n.drain()
			return
		}
	}
}

// drain publishes every row queued before Close, or drops those left once
// Close's context has ended. Nothing joins the queue once closing is closed,
// so an empty queue is the end.
func (n *Notifier) drain() {
	for {
		select {
		case e := <-n.queue:
			if n.ctx.Err() != nil {
				n.drop(e, ReasonCloseDeadline)
				continue
			}
			n.publish(e)
		default:
			return
		}
	}
}

func (n *Notifier) publish(e *ledgerv1.Event) {
	data, err := proto.Marshal(e)
	if err != nil {
		n.fail(e, ReasonUnencodable, err)
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.Timeout)
	defer cancel()
	_, err = n.js.PublishMsg(ctx,
		&nats.Msg{Subject: wire.NotifySubject(e.GetTenant(), e.GetTool()), Data: data},
		jetstream.WithMsgID(e.GetEventId()),
		jetstream.WithExpectStream(wire.NotifyStream),
	)
	switch {
	case err == nil:
		n.published.Add(1)
	case n.ctx.Err() != nil:
		// Close gave up waiting: the row was cut off, not refused.
		n.drop(e, ReasonCloseDeadline)
	default:
		n.fail(e, ReasonPublishFailed, err)
	}
}

// fail logs and counts a row the stream did not take. The line names the
// row and the error, never a column that could carry a value.
func (n *Notifier) fail(e *ledgerv1.Event, reason string, err error) {
	n.failed.Add(1)
	n.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "notification not published",
		slog.String("event_id", e.GetEventId()),
		slog.String("tool", e.GetTool()),
		slog.String("reason", reason),
		slog.String("error", err.Error()),
	)
}

// drop logs and counts a row never offered to the stream.
func (n *Notifier) drop(e *ledgerv1.Event, reason string) {
	if reason == ReasonCloseDeadline {
		n.cutOff.Add(1)
	}
	n.dropped.Add(1)
	n.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "notification dropped",
		slog.String("event_id", e.GetEventId()),
		slog.String("tool", e.GetTool()),
		slog.String("reason", reason),
	)
}
