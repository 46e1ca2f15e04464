package jetstream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/ledger/logsink"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// Defaults for the zero values of Options.
const (
	DefaultFlushInterval  = 200 * time.Millisecond
	DefaultMaxBatchRows   = 256
	DefaultMaxBatchBytes  = 512 << 10
	DefaultBufferRows     = 64 << 10
	DefaultPublishTimeout = 2 * time.Second
)

// retryPause separates the attempts of a batch whose outcome is unknown.
const retryPause = 100 * time.Millisecond

// headerRoom is what a batch leaves of the server's maximum payload for the
// message's headers.
const headerRoom = 1 << 10

// Why a row fell back to the log, as its FallbackReasonKey says.
const (
	// ReasonBufferFull: the row arrived while the buffer was full.
	ReasonBufferFull = "buffer_full"
	// ReasonClosed: the row arrived after Close.
	ReasonClosed = "closed"
	// ReasonPublishFailed: its batch was definitely not written (the bus
	// away, no stream answering, or the server refusing it).
	ReasonPublishFailed = "publish_failed"
	// ReasonPublishUnknown: whether its batch reached the stream is
	// unknown: every attempt for RetryHorizon went unanswered. The row may
	// also be on the stream; merge the log with the stream by event id.
	ReasonPublishUnknown = "publish_unknown"
	// ReasonCloseDeadline: Close's context ended before its batch was
	// acknowledged. Like ReasonPublishUnknown, the row may also be on the
	// stream when an attempt was under way.
	ReasonCloseDeadline = "close_deadline"
	// ReasonUnencodable: the row does not marshal (a string that is not
	// UTF-8), so it can be in no batch.
	ReasonUnencodable = "unencodable"
)

// Options tune a Recorder. Logger is required; a zero duration or size takes
// its default.
type Options struct {
	// Logger receives the fallen-back rows, as logsink lines, and one
	// warning per batch that could not be published.
	Logger *slog.Logger
	// FlushInterval is how long a batch's first row waits before the batch
	// is published whatever its size. Default DefaultFlushInterval.
	FlushInterval time.Duration
	// MaxBatchRows publishes a batch when it holds this many rows. Default
	// DefaultMaxBatchRows.
	MaxBatchRows int
	// MaxBatchBytes publishes a batch before a row would take its encoding
	// past this many bytes; a single larger row is a batch on its own.
	// Default DefaultMaxBatchBytes; it must leave room for headers in the
	// server's maximum payload.
	MaxBatchBytes int
	// BufferRows is how many recorded rows may wait in batches not yet
	// taken by the publisher; a row beyond it falls back at once. Default
	// DefaultBufferRows.
	BufferRows int
	// PublishTimeout bounds each attempt to publish a batch and have it
	// acknowledged. Default DefaultPublishTimeout.
	PublishTimeout time.Duration
}

// withDefaults fills the zero values and refuses the negative ones, naming
// every problem at once.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if o.Logger == nil {
		errs = append(errs, errors.New("Options.Logger is required: fallen-back rows are written through it"))
	}
	o.FlushInterval = orDefault(o.FlushInterval, DefaultFlushInterval, "FlushInterval", &errs)
	o.MaxBatchRows = orDefault(o.MaxBatchRows, DefaultMaxBatchRows, "MaxBatchRows", &errs)
	o.MaxBatchBytes = orDefault(o.MaxBatchBytes, DefaultMaxBatchBytes, "MaxBatchBytes", &errs)
	o.BufferRows = orDefault(o.BufferRows, DefaultBufferRows, "BufferRows", &errs)
	o.PublishTimeout = orDefault(o.PublishTimeout, DefaultPublishTimeout, "PublishTimeout", &errs)
	return o, errors.Join(errs...)
}

func orDefault[T int | time.Duration](v, def T, name string, errs *[]error) T {
	switch {
	case v < 0:
		*errs = append(*errs, fmt.Errorf("Options.%s is %v; it must be positive, or zero for the default %v", name, v, def))
		return def
	case v == 0:
		return def
	}
	return v
}

// Recorder batches rows onto the ledger stream and falls back to the log.
type Recorder struct {
	js       jetstream.JetStream
	opts     Options
	idPrefix string
	counts   ledger.Counts
	// batchFellBack counts the rows the publisher let fall back, so Close
	// can tell whether everything accepted before it reached the stream.
	batchFellBack atomic.Uint64

	// mu guards the batches rows wait in, and orders Record against Close:
	// a row is either in a batch before Close ships them all, or takes the
	// closed path.
	mu      sync.Mutex
	closed  bool
	batches batcher
	// wake tells the publisher that a batch was shipped, or that an open
	// batch started when none was: one signal is pending at most.
	wake chan struct{}

	// ctx bounds every publish; Close cancels it when its own context ends.
	ctx     context.Context
	cancel  context.CancelFunc
	closing chan struct{} // closed by the first Close
	done    chan struct{} // closed when the publisher has returned
	// lastErr is why rows last fell back from a batch; guarded by mu.
	lastErr error
}

// New starts a Recorder publishing through js. It refuses options it cannot
// honour, including a MaxBatchBytes the connected server's maximum payload
// cannot carry. Close stops it.
func New(js jetstream.JetStream, o Options) (*Recorder, error) {
	if js == nil {
		return nil, errors.New("ledger/jetstream: New needs a JetStream context")
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("ledger/jetstream: %w", err)
	}
	if nc := js.Conn(); nc != nil {
		if max := nc.MaxPayload(); max > 0 && int64(o.MaxBatchBytes)+headerRoom > max {
			return nil, fmt.Errorf("ledger/jetstream: Options.MaxBatchBytes is %d but the server takes messages of at most %d bytes, headers included; lower it to %d or raise the server's max_payload", o.MaxBatchBytes, max, max-headerRoom)
		}
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand)
	ctx, cancel := context.WithCancel(context.Background())
	r := &Recorder{
		js:       js,
		opts:     o,
		idPrefix: hex.EncodeToString(id[:]),
		batches:  newBatcher(o),
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	go newPublisher(r).run()
	return r, nil
}

// Record encodes e into its subject's batch, or logs it at once when the
// buffer is full, the Recorder is closed or e does not encode. It never
// waits on the network, and wakes the publisher only when a batch is ready
// for it or a flush interval starts. A nil e is not a row and is ignored.
func (r *Recorder) Record(e *ledgerv1.Event) {
	if e == nil {
		return
	}
	size := proto.Size(e) // outside the lock; the encoding reuses it
	now := time.Now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.fallBack(e, ReasonClosed)
		return
	}
	if r.batches.waiting >= r.opts.BufferRows {
		r.mu.Unlock()
		r.fallBack(e, ReasonBufferFull)
		return
	}
	wake, err := r.batches.add(e, size, now)
	if err != nil {
		r.lastErr = err
	}
	r.mu.Unlock()
	if wake {
		select {
		case r.wake <- struct{}{}:
		default: // a signal is already pending
		}
	}
	if err != nil {
		r.batchFellBack.Add(1)
		r.fallBack(e, ReasonUnencodable)
	}
}

// Close publishes every row accepted before it and waits for their
// acknowledgements until ctx is done; whatever is then unpublished falls back
// to the log before Close returns. The error says how many rows fell back on
// the way; they are in the log, not lost. Rows recorded afterwards are logged
// at once. Close may be called more than once.
func (r *Recorder) Close(ctx context.Context) error {
	r.mu.Lock()
	first := !r.closed
	r.closed = true
	r.mu.Unlock()
	before := r.batchFellBack.Load()
	if first {
		close(r.closing)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		r.cancel()
		<-r.done
	}
	r.cancel()
	if n := r.batchFellBack.Load() - before; first && n > 0 {
		r.mu.Lock()
		lastErr := r.lastErr
		r.mu.Unlock()
		return fmt.Errorf("ledger/jetstream: %d rows fell back to the log while closing: %w", n, lastErr)
	}
	return nil
}

// Counts are the rows the stream acknowledged (Recorded), the rows logged
// instead (FellBack) and the rows neither took (Lost).
func (r *Recorder) Counts() *ledger.Counts { return &r.counts }

func (r *Recorder) fallBack(e *ledgerv1.Event, reason string) {
	if err := logsink.LogFallbackRow(r.opts.Logger, e, reason); err != nil {
		r.counts.Lost.Add(1)
		return
	}
	r.counts.FellBack.Add(1)
}

var _ ledger.Recorder = (*Recorder)(nil)
