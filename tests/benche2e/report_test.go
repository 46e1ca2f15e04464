package main

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func TestCPUPerCallIsTheSpentTimeOverTheCallsOfTheWholeProcess(t *testing.T) {
	o := options{phase: 2 * time.Second, warmup: 500 * time.Millisecond}
	// 1,000 calls/s counted over 2 s; the process made calls for 2.5 s.
	if got := perCall(250*time.Millisecond, loadResult{PerSecond: 1000}, o); got != 100 {
		t.Fatalf("%v µs per call, want 100 (250 ms over 2,500 calls)", got)
	}
	if got := perCall(time.Second, loadResult{}, o); got != 0 {
		t.Fatalf("%v µs per call with no calls made, want 0", got)
	}
}

// The sink takes what the real OTLP/HTTP exporter sends, as garmd's
// exporter sends it, and answers so that the exporter counts it exported.
func TestTheOTLPSinkTakesARealExport(t *testing.T) {
	sink, err := startOTLPSink()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sink.stop)
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(sink.url+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	_, span := tp.Tracer("test").Start(ctx, "a span")
	span.End()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatalf("the export was refused: %v", err)
	}
	if sink.exports.Load() != 1 || sink.bytes.Load() == 0 {
		t.Fatalf("%d exports of %d bytes, want one", sink.exports.Load(), sink.bytes.Load())
	}
}
