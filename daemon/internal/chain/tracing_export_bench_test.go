package chain_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/garm-dev/garm/daemon/internal/tracing"
	"github.com/garm-dev/garm/daemon/internal/tracing/otlphttp"
	"github.com/garm-dev/garm/daemon/internal/transport"
)

// BenchmarkChainInProcessExported is a traced call at 100% sampling whose
// spans are exported, as garmd exports them: its Batcher, its OTLP/HTTP
// exporter (package otlphttp), a receiver on loopback that reads and drops each export. The
// exporter works on goroutines of its own, so the time of the loop says
// little; cpu-µs/op is the whole process's CPU per call (rusage), the
// spans' export and receipt included, which is what tracing every call
// costs the machine (docs/decisions/0143). The baseline is tracing off;
// the shapes are garmd's default and --trace-steps, every call sampled or
// a tenth of them.
func BenchmarkChainInProcessExported(b *testing.B) {
	steps := []tracing.Option{tracing.WithStepSpans()}
	for _, shape := range []struct {
		name    string
		on      bool
		sampler sdktrace.Sampler
		opts    []tracing.Option
	}{
		{"off", false, nil, nil},
		{"default", true, sdktrace.AlwaysSample(), nil},
		{"steps", true, sdktrace.AlwaysSample(), steps},
		{"default-10%", true, sdktrace.TraceIDRatioBased(0.1), nil},
		{"steps-10%", true, sdktrace.TraceIDRatioBased(0.1), steps},
	} {
		b.Run(shape.name, func(b *testing.B) {
			r := newRigRecording(b, discard{})
			flush := func() {}
			if shape.on {
				receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
				}))
				b.Cleanup(receiver.Close)
				exp, err := otlphttp.New(otlphttp.Config{URL: receiver.URL + otlphttp.TracesPath}, "garmd/bench")
				if err != nil {
					b.Fatal(err)
				}
				batcher := tracing.NewBatcher(exp, tracing.BatchLimits{})
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(shape.sampler), sdktrace.WithSpanProcessor(batcher))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				r.chain.Tracer = tracing.New(tp, "bench", shape.opts...)
				flush = func() {
					if err := tp.ForceFlush(context.Background()); err != nil {
						b.Fatal(err)
					}
					if n := batcher.Dropped(); n > 0 {
						b.Fatalf("%d spans dropped: the figure would leave their export out", n)
					}
				}
			}
			answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
			r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
			req := r.request(r.token(b), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
			ctx := context.Background()
			b.ReportAllocs()
			before, calls := cpuTime(), 0
			for b.Loop() {
				if resp := r.chain.Run(ctx, req); resp.Status != 200 {
					b.Fatal(resp.Status)
				}
				// The spans of every 400 calls are exported before the
				// next 400 start: the queue never fills nor grows a
				// backlog that garmd at load does not have.
				if calls++; calls%400 == 0 {
					flush()
				}
			}
			flush()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
