package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batches is an exporter that keeps each batch's span names, and says
// when one arrives.
type batches struct {
	mu       sync.Mutex
	got      [][]string
	arrived  chan struct{}
	shutdown int
	fail     error
	block    chan struct{}
	spans    []sdktrace.ReadOnlySpan
}

func newBatches() *batches { return &batches{arrived: make(chan struct{}, 1024)} }

func (e *batches) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.block != nil {
		<-e.block
	}
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	e.mu.Lock()
	e.got = append(e.got, names)
	e.mu.Unlock()
	e.arrived <- struct{}{}
	return e.fail
}

func (e *batches) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shutdown++
	return nil
}

func (e *batches) sizes() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var n []int
	for _, b := range e.got {
		n = append(n, len(b))
	}
	return n
}

func (e *batches) total() int {
	n := 0
	for _, s := range e.sizes() {
		n += s
	}
	return n
}

func endSpans(tp *sdktrace.TracerProvider, n int) {
	tr := tp.Tracer("test")
	for range n {
		_, s := tr.Start(context.Background(), "s")
		s.End()
	}
}

func waitArrived(t *testing.T, e *batches) {
	t.Helper()
	select {
	case <-e.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no batch was exported")
	}
}

// waitTaken waits until the exporting goroutine has taken what b queued.
func waitTaken(t *testing.T, b *Batcher) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		taken := len(b.queue) == 0
		b.mu.Unlock()
		if taken {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the exporter never took the first batch")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestAFullBatchIsExportedAtOnceAndTheRestAtTheDelay(t *testing.T) {
	e := newBatches()
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 4, MaxQueue: 16})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	endSpans(tp, 3)
	select {
	case <-e.arrived:
		t.Fatal("less than a batch was exported before the delay")
	case <-time.After(50 * time.Millisecond):
	}
	endSpans(tp, 1)
	waitArrived(t, e)
	if got := e.sizes(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("batches %v, want one of 4", got)
	}

	short := NewBatcher(e, BatchLimits{ScheduleDelay: 20 * time.Millisecond, MaxBatch: 4, MaxQueue: 16})
	tp2 := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(short))
	t.Cleanup(func() { _ = tp2.Shutdown(context.Background()) })
	endSpans(tp2, 2)
	waitArrived(t, e)
	if got := e.sizes(); len(got) != 2 || got[1] != 2 {
		t.Fatalf("batches %v, want the 2 spans exported at the delay", got)
	}
}

func TestShutdownExportsEverythingQueuedOnceAndTakesNoMore(t *testing.T) {
	e := newBatches()
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 4, MaxQueue: 64})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 10)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.total(); got != 10 {
		t.Fatalf("%d spans exported at shutdown, want 10 (batches %v)", got, e.sizes())
	}
	for _, n := range e.sizes() {
		if n > 4 {
			t.Fatalf("a batch of %d spans, over the limit of 4", n)
		}
	}
	if err := b.Shutdown(context.Background()); err != nil || e.shutdown != 1 {
		t.Fatalf("a second shutdown: %v; the exporter shut down %d times", err, e.shutdown)
	}
	b.OnEnd(spanEndedOn(t))
	if got := e.total(); got != 10 || b.Dropped() != 1 {
		t.Fatalf("a span after shutdown: %d exported, %d dropped", got, b.Dropped())
	}
	if err := b.ForceFlush(context.Background()); err != nil {
		t.Fatalf("a flush after shutdown: %v", err)
	}
}

// spanEndedOn is a sampled span that ended on a provider of its own.
func spanEndedOn(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	keep := newBatches()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(keepSpans{keep: keep}))
	endSpans(tp, 1)
	_ = tp.Shutdown(context.Background())
	return keep.spans[0]
}

type keepSpans struct{ keep *batches }

func (k keepSpans) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	k.keep.spans = append(k.keep.spans, spans...)
	return nil
}
func (keepSpans) Shutdown(context.Context) error { return nil }

func TestAFlushExportsWhatEndedBeforeIt(t *testing.T) {
	e := newBatches()
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 100, MaxQueue: 1000})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	endSpans(tp, 7)
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.total(); got != 7 {
		t.Fatalf("%d spans exported by a flush, want 7", got)
	}
}

func TestAFullQueueDropsAndCountsAndNeverBlocksTheCaller(t *testing.T) {
	e := newBatches()
	e.block = make(chan struct{})
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 2, MaxQueue: 4})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 2) // a batch: the exporter takes it and blocks
	waitTaken(t, b)
	ended := make(chan struct{})
	go func() { endSpans(tp, 10); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("ending spans blocked on a stalled exporter")
	}
	if got := b.Dropped(); got != 6 {
		t.Fatalf("%d spans dropped, want 6 (10 ended, 4 queued)", got)
	}
	var reported []error
	previous := otel.GetErrorHandler()
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { reported = append(reported, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(previous) })
	close(e.block)
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "dropped 6 spans") {
		t.Fatalf("at shutdown the batcher reported %v, want the 6 spans it dropped", reported)
	}
	if got := e.total(); got != 6 {
		t.Fatalf("%d spans exported, want the first batch and the 4 queued", got)
	}
}

func TestAFailedExportIsCountedAsDropped(t *testing.T) {
	e := newBatches()
	e.fail = errors.New("collector away")
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 3, MaxQueue: 9})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 3)
	waitArrived(t, e)
	_ = tp.Shutdown(context.Background())
	if got := b.Dropped(); got != 3 {
		t.Fatalf("%d dropped, want the failed batch's 3", got)
	}
}

func TestAnUnsampledSpanIsNotQueued(t *testing.T) {
	e := newBatches()
	b := NewBatcher(e, BatchLimits{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()), sdktrace.WithSpanProcessor(b))
	endSpans(tp, 5)
	_ = tp.Shutdown(context.Background())
	if got := e.total(); got != 0 || b.Dropped() != 0 {
		t.Fatalf("%d unsampled spans exported, %d dropped", got, b.Dropped())
	}
}

func TestSpansEndedFromManyGoroutinesAreEachExportedOnce(t *testing.T) {
	e := newBatches()
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Millisecond, MaxBatch: 7, MaxQueue: 100_000})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { endSpans(tp, 500) })
	}
	wg.Wait()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.total(); got != 4000 || b.Dropped() != 0 {
		t.Fatalf("%d exported, %d dropped, want 4000 and 0", got, b.Dropped())
	}
}

func TestTheBatchLimitsAreTheStandardVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want BatchLimits
	}{
		{"none set", nil, BatchLimits{DefaultScheduleDelay, DefaultExportTimeout, DefaultMaxQueue, DefaultMaxBatch}},
		{"all set", map[string]string{
			"OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "1000",
			"OTEL_BSP_MAX_QUEUE_SIZE": "64", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "16",
		}, BatchLimits{250 * time.Millisecond, time.Second, 64, 16}},
		{"unparsable and negative at their defaults", map[string]string{
			"OTEL_BSP_SCHEDULE_DELAY": "soon", "OTEL_BSP_MAX_QUEUE_SIZE": "-3",
		}, BatchLimits{DefaultScheduleDelay, DefaultExportTimeout, DefaultMaxQueue, DefaultMaxBatch}},
		{"a batch over the queue is the queue", map[string]string{
			"OTEL_BSP_MAX_QUEUE_SIZE": "10", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "100",
		}, BatchLimits{DefaultScheduleDelay, DefaultExportTimeout, 10, 10}},
	} {
		if got := BatchLimitsFromEnv(lookup(tc.env)); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestOnlyWholeBatchesLeaveBeforeTheDelay(t *testing.T) {
	e := newBatches()
	e.block = make(chan struct{})
	b := NewBatcher(e, BatchLimits{ScheduleDelay: time.Hour, MaxBatch: 4, MaxQueue: 64})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b))
	endSpans(tp, 4) // a batch: the exporter takes it and blocks
	waitTaken(t, b)
	endSpans(tp, 6) // a batch and a half wait behind it
	close(e.block)
	waitArrived(t, e)
	waitArrived(t, e)
	select {
	case <-e.arrived:
		t.Fatalf("the half batch left before the delay: %v", e.sizes())
	case <-time.After(50 * time.Millisecond):
	}
	if got := e.sizes(); len(got) != 2 || got[0] != 4 || got[1] != 4 {
		t.Fatalf("batches %v, want two of 4", got)
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.sizes(); len(got) != 3 || got[2] != 2 {
		t.Fatalf("batches %v, want the 2 left exported at shutdown", got)
	}
}
