package tracing

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Batcher is the span processor garmd exports through: spans are queued
// as they end and handed to the exporter in batches. It does what the
// SDK's batch span processor does, configured by the same OTEL_BSP_*
// variables, with one difference that matters on garmd's hot path: a span
// ending costs a lock and an append, never a goroutine wake-up. The SDK's
// processor sends every span over a channel to a parked goroutine, so a
// call of six spans woke it six times; here the exporting goroutine wakes
// when a batch is full, when the schedule delay passes, or when asked to
// flush (docs/decisions/0077).
//
// The queue is bounded: a span ending while MaxQueue spans wait is dropped
// and counted (Dropped), as the SDK drops it. Only the exporting goroutine
// calls the exporter, so an exporter need not be safe for concurrent use.
type Batcher struct {
	exporter sdktrace.SpanExporter
	limits   BatchLimits

	mu     sync.Mutex
	queue  []sdktrace.ReadOnlySpan
	spare  []sdktrace.ReadOnlySpan
	closed bool

	// ready wakes the exporting goroutine; it holds at most one signal.
	ready   chan struct{}
	flushes chan chan struct{}
	stop    chan struct{}
	done    chan struct{}

	dropped  atomic.Uint64
	shutdown sync.Once
	err      error
}

// BatchLimits are a Batcher's bounds, the OTEL_BSP_* variables' meaning.
type BatchLimits struct {
	// ScheduleDelay is the longest a span waits before its batch is
	// exported (OTEL_BSP_SCHEDULE_DELAY, ms; 5 s).
	ScheduleDelay time.Duration
	// ExportTimeout bounds one export (OTEL_BSP_EXPORT_TIMEOUT, ms; 30 s).
	ExportTimeout time.Duration
	// MaxQueue is the most spans waiting at once (OTEL_BSP_MAX_QUEUE_SIZE;
	// 2048).
	MaxQueue int
	// MaxBatch is the most spans in one export, at most MaxQueue
	// (OTEL_BSP_MAX_EXPORT_BATCH_SIZE; 512).
	MaxBatch int
}

// The SDK's defaults, which the specification sets.
const (
	DefaultScheduleDelay = 5 * time.Second
	DefaultExportTimeout = 30 * time.Second
	DefaultMaxQueue      = 2048
	DefaultMaxBatch      = 512
)

// BatchLimitsFromEnv are the limits the OTEL_BSP_* variables set, each
// unset, unparsable or non-positive one at its default, as the SDK reads
// them; a batch larger than the queue is the queue.
func BatchLimitsFromEnv(lookup func(string) (string, bool)) BatchLimits {
	number := func(name string, def int) int {
		v, ok := lookup(name)
		if !ok {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return def
		}
		return n
	}
	ms := func(name string, def time.Duration) time.Duration {
		return time.Duration(number(name, int(def/time.Millisecond))) * time.Millisecond
	}
	return BatchLimits{
		ScheduleDelay: ms("OTEL_BSP_SCHEDULE_DELAY", DefaultScheduleDelay),
		ExportTimeout: ms("OTEL_BSP_EXPORT_TIMEOUT", DefaultExportTimeout),
		MaxQueue:      number("OTEL_BSP_MAX_QUEUE_SIZE", DefaultMaxQueue),
		MaxBatch:      number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", DefaultMaxBatch),
	}.withDefaults()
}

func (l BatchLimits) withDefaults() BatchLimits {
	if l.ScheduleDelay <= 0 {
		l.ScheduleDelay = DefaultScheduleDelay
	}
	if l.ExportTimeout <= 0 {
		l.ExportTimeout = DefaultExportTimeout
	}
	if l.MaxQueue <= 0 {
		l.MaxQueue = DefaultMaxQueue
	}
	if l.MaxBatch <= 0 {
		l.MaxBatch = DefaultMaxBatch
	}
	l.MaxBatch = min(l.MaxBatch, l.MaxQueue)
	return l
}

// NewBatcher is a Batcher exporting to exporter within l (zero fields at
// their defaults). It starts the exporting goroutine; Shutdown ends it.
func NewBatcher(exporter sdktrace.SpanExporter, l BatchLimits) *Batcher {
	l = l.withDefaults()
	b := &Batcher{
		exporter: exporter,
		limits:   l,
		queue:    make([]sdktrace.ReadOnlySpan, 0, l.MaxBatch),
		spare:    make([]sdktrace.ReadOnlySpan, 0, l.MaxBatch),
		ready:    make(chan struct{}, 1),
		flushes:  make(chan chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.run()
	return b
}

// OnStart does nothing: a span is queued when it ends.
func (*Batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span. It wakes the exporting goroutine only when
// the queue reaches a batch.
func (b *Batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	if b.closed || len(b.queue) >= b.limits.MaxQueue {
		b.mu.Unlock()
		b.dropped.Add(1)
		return
	}
	b.queue = append(b.queue, s)
	full := len(b.queue) == b.limits.MaxBatch
	b.mu.Unlock()
	if full {
		b.wake()
	}
}

func (b *Batcher) wake() {
	select {
	case b.ready <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// Dropped is how many sampled spans were dropped: the queue was full, the
// batcher had shut down, or their export failed.
func (b *Batcher) Dropped() uint64 { return b.dropped.Load() }

// ForceFlush exports every span queued before it was called, and waits
// for that until ctx is done.
func (b *Batcher) ForceFlush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case b.flushes <- done:
	case <-b.done:
		return nil // shut down: everything was exported then
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops taking spans, exports every span queued, and shuts the
// exporter down, waiting until ctx is done. Later calls do nothing.
func (b *Batcher) Shutdown(ctx context.Context) error {
	b.shutdown.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		close(b.stop)
		select {
		case <-b.done:
		case <-ctx.Done():
			b.err = ctx.Err()
			return
		}
		b.err = b.exporter.Shutdown(ctx)
		if n := b.dropped.Load(); n > 0 {
			// Where the SDK's components report what they lose:
			// OpenTelemetry's error handler, which garmd points at its
			// log (daemon/tracing.go).
			otel.Handle(fmt.Errorf("garmd's span batcher dropped %d spans", n))
		}
	})
	return b.err
}

// run is the exporting goroutine: it exports the whole batches queued
// when one is full, and everything queued when the schedule delay passes,
// on a flush and at shutdown.
func (b *Batcher) run() {
	defer close(b.done)
	timer := time.NewTimer(b.limits.ScheduleDelay)
	defer timer.Stop()
	for {
		select {
		case <-b.ready:
			b.exportQueued(false)
			continue
		case <-timer.C:
		case done := <-b.flushes:
			b.exportQueued(true)
			close(done)
			continue
		case <-b.stop:
			b.exportQueued(true)
			return
		}
		b.exportQueued(true)
		timer.Reset(b.limits.ScheduleDelay)
	}
}

// exportQueued exports the queue a batch at a time: every span queued
// when all is set, else only whole batches (the rest waits for its batch
// to fill or for the delay), and then whatever filled a whole batch while
// it exported.
func (b *Batcher) exportQueued(all bool) {
	for {
		b.mu.Lock()
		n := len(b.queue)
		if !all {
			n -= n % b.limits.MaxBatch
		}
		if n == 0 {
			b.mu.Unlock()
			return
		}
		batch := b.queue
		// What is not taken stays queued, in the order it ended.
		b.queue = append(b.spare[:0], batch[n:]...)
		b.spare = nil
		b.mu.Unlock()
		for start := 0; start < n; start += b.limits.MaxBatch {
			b.export(batch[start:min(start+b.limits.MaxBatch, n)])
		}
		clear(batch) // the spans are the exporter's now, not the queue's
		b.giveBack(batch)
		all = false
	}
}

// giveBack keeps an emptied queue for the next swap.
func (b *Batcher) giveBack(batch []sdktrace.ReadOnlySpan) {
	b.mu.Lock()
	b.spare = batch[:0]
	b.mu.Unlock()
}

// export hands one batch to the exporter within the export timeout. An
// export that fails is dropped, as the SDK drops it: the exporter retries
// what it can itself, and spans are not worth holding a call for.
func (b *Batcher) export(batch []sdktrace.ReadOnlySpan) {
	ctx, cancel := context.WithTimeout(context.Background(), b.limits.ExportTimeout)
	defer cancel()
	if err := b.exporter.ExportSpans(ctx, batch); err != nil {
		b.dropped.Add(uint64(len(batch)))
	}
}

var _ sdktrace.SpanProcessor = (*Batcher)(nil)
