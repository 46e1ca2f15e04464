package chain_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/garm-dev/garm/daemon/internal/tracing"
)

// BenchmarkChainInProcessTraced is BenchmarkChainInProcess with tracing on
// at 100% sampling, every span handed to the batching processor garmd
// uses and exported to an exporter that drops it: the cost of the spans
// themselves, in garmd's default shape (the server span and the NATS
// client span, docs/decisions/0143), against BenchmarkChainInProcess
// (tracing off).
func BenchmarkChainInProcessTraced(b *testing.B) { benchmarkTraced(b, "") }

// BenchmarkChainInProcessTracedSteps is the same with a span per step
// (--trace-steps), the tree of docs/decisions/0060.
func BenchmarkChainInProcessTracedSteps(b *testing.B) {
	benchmarkShaped(b, "", sdktrace.AlwaysSample(), tracing.WithStepSpans())
}

// BenchmarkChainInProcessTracedUnderACallersTrace is the same call sent
// with a caller's traceparent, which garmd's span joins.
func BenchmarkChainInProcessTracedUnderACallersTrace(b *testing.B) {
	benchmarkTraced(b, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
}

// BenchmarkChainInProcessTracedUnsampled is the same call with tracing on
// and the call not sampled: its spans do not record.
func BenchmarkChainInProcessTracedUnsampled(b *testing.B) {
	benchmarkSampled(b, "", sdktrace.NeverSample())
}

func benchmarkTraced(b *testing.B, traceparent string) {
	benchmarkSampled(b, traceparent, sdktrace.AlwaysSample())
}

func benchmarkSampled(b *testing.B, traceparent string, sampler sdktrace.Sampler) {
	benchmarkShaped(b, traceparent, sampler)
}

func benchmarkShaped(b *testing.B, traceparent string, sampler sdktrace.Sampler, shape ...tracing.Option) {
	r := newRigRecording(b, discard{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(tracing.NewBatcher(dropSpans{}, tracing.BatchLimits{})))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	r.chain.Tracer = tracing.New(tp, "bench", shape...)
	benchmarkAdd(b, r, traceparent)
}

// dropSpans is an exporter that drops every span.
type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }
