package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The SDK's own cost of a call's spans, without garmd's chain: a server
// span and five children started and ended, as a plain tool call has
// them (authenticate, validate_input, the NATS client span, redact,
// project_cards). It is the floor under BenchmarkChainInProcessTraced's
// overhead (docs/decisions/0077): whatever garmd does, six SDK spans cost
// at least this.
func benchmarkSixSpans(b *testing.B, tp trace.TracerProvider) {
	tr := tp.Tracer(ScopeName)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, call := tr.Start(ctx, NameExecuteTool, serverSpan...)
		for _, step := range []string{StepAuthenticate, StepInput, "request calc.v1.Calculator.Add", StepRedact, StepProjectCards} {
			_, s := tr.Start(c, step, internalSpan...)
			s.End()
		}
		call.End()
	}
}

// BenchmarkSixSDKSpansNoProcessor is the SDK's spans recorded and handed
// to no processor: what a span costs before it is exported at all.
func BenchmarkSixSDKSpansNoProcessor(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	benchmarkSixSpans(b, tp)
}

// BenchmarkSixSDKSpansBatcher is the same spans queued by garmd's Batcher
// to an exporter that drops them.
func BenchmarkSixSDKSpansBatcher(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(NewBatcher(dropSpans{}, BatchLimits{})))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	benchmarkSixSpans(b, tp)
}

// BenchmarkSixSDKSpansSDKBatcher is the same spans queued by the SDK's
// batch span processor, which wakes its goroutine for every span.
func BenchmarkSixSDKSpansSDKBatcher(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropSpans{}))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	benchmarkSixSpans(b, tp)
}

type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkOTLPExportPerSpan is what exporting costs once spans are
// queued: a batch of 512 dispatch spans, as garmd records them, handed to
// the OTLP/HTTP exporter garmd builds, posting to a receiver on loopback
// that reads and drops the request (its reading is in the figure too). It
// runs on the exporting goroutine, off the call's path, but on the same
// cores: with every call sampled it costs more than the spans do.
func BenchmarkOTLPExportPerSpan(b *testing.B) {
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(receiver.Close)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(receiver.URL+"/v1/traces"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	recorded := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorded))
	tracer := New(tp, "bench")
	ctx, _ := tracer.StartCall(context.Background(), CallStart{Surface: "http"})
	const batch = 512
	for range batch {
		_, span := tracer.StartDispatch(ctx, "calc.v1.Calculator.Add")
		EndStep(span, nil)
	}
	spans := recorded.Ended()
	b.ReportAllocs()
	for b.Loop() {
		if err := exp.ExportSpans(context.Background(), spans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/batch, "ns/span")
}
