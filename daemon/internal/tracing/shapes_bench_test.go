package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/tracing/otlphttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// cpuNow is the process's user and system CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// callAttributes are a successful call's server span attributes, as
// garmd sets them.
var callAttributes = []attribute.KeyValue{
	SurfaceKey.String("http"), VersionKey.String("v0.0.0-dev"), operationExecuteTool, OutcomeKey.String("ok"),
	GenAIToolNameKey.String("calc.v1.add"), EventIDKey.String("01JEXAMPLEEVENTID0000000000"),
	DigestKey.String("sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
}

// BenchmarkCallShapeExported is what the spans of one plain call cost
// the whole process, exported as garmd exports them (its Batcher, the
// OTLP/HTTP exporter, a receiver on loopback that drops each export):
// cpu-µs/op is the process's CPU per call, the exporter's goroutines
// included. The spans of every 400 calls are exported before the next 400
// start, so that the queue never fills (with a span per step, 2,000 spans
// of the 2,048 it holds), never grows a backlog a loop would and garmd at
// load does not, and no span waits past the loop. The shapes: "steps", a
// span per step (--trace-steps); "attributes", garmd's default, the server
// span and the NATS client span with each step's time an attribute;
// "events", the same with each step an event at its end instead, measured
// and not taken; "none", the two spans with no step times at all, the
// floor (docs/decisions/0143). Each shape is exported by garmd's exporter
// (package otlphttp) and by the SDK's otlptracehttp, which it replaced
// (docs/decisions/0149).
func BenchmarkCallShapeExported(b *testing.B) {
	for _, shape := range []string{"steps", "attributes", "events", "none"} {
		for _, exporter := range []string{"garmd", "sdk"} {
			b.Run(shape+"/exporter="+exporter, func(b *testing.B) { callShapeExported(b, shape, exporter) })
		}
	}
}

func callShapeExported(b *testing.B, shape, exporter string) {
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer receiver.Close()
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if exporter == "sdk" {
		exp, err = otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(receiver.URL+otlphttp.TracesPath))
	} else {
		exp, err = otlphttp.New(otlphttp.Config{URL: receiver.URL + otlphttp.TracesPath}, "garmd/bench")
	}
	if err != nil {
		b.Fatal(err)
	}
	batcher := NewBatcher(exp, BatchLimits{})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(batcher))
	tr := tp.Tracer(ScopeName)
	h := []attribute.KeyValue{messagingNATS, messagingSend, messagingRequest, attribute.String("messaging.destination.name", "calc.v1.Calculator.Add")}
	ctx := context.Background()
	before := cpuNow()
	calls := 0
	for b.Loop() {
		// Every 400 calls, their spans are exported and
		// waited for: the queue never grows beyond what garmd's
		// holds at load, and no span waits past the loop.
		if calls++; calls%400 == 0 {
			if err := tp.ForceFlush(ctx); err != nil {
				b.Fatal(err)
			}
		}
		c, call := tr.Start(ctx, "execute_tool calc.v1.add", serverSpan...)
		switch shape {
		case "steps":
			_, s := tr.Start(c, StepAuthenticate, internalSpan...)
			s.SetAttributes(tokenCached...)
			s.End()
			_, s = tr.Start(c, StepInput, internalSpan...)
			s.End()
			_, s = tr.Start(c, "request calc.v1.Calculator.Add", clientSpan...)
			s.SetAttributes(h...)
			s.End()
			_, s = tr.Start(c, StepRedact, internalSpan...)
			s.End()
			call.SetAttributes(callAttributes...)
		default:
			_, s := tr.Start(c, "request calc.v1.Calculator.Add", clientSpan...)
			s.SetAttributes(h...)
			s.End()
			attrs := append(callAttributes[:len(callAttributes):len(callAttributes)], tokenCached[0])
			if shape == "attributes" {
				attrs = append(attrs, StepDurationKey(StepAuthenticate).Int64(1234), StepDurationKey(StepInput).Int64(5678), StepDurationKey(StepRedact).Int64(910))
			}
			if shape == "events" {
				now := time.Now()
				call.AddEvent(StepAuthenticate, trace.WithTimestamp(now))
				call.AddEvent(StepInput, trace.WithTimestamp(now))
				call.AddEvent(StepRedact, trace.WithTimestamp(now))
			}
			call.SetAttributes(attrs...)
		}
		call.End()
	}
	if err := tp.ForceFlush(ctx); err != nil || batcher.Dropped() > 0 {
		b.Fatalf("%v, %d spans dropped", err, batcher.Dropped())
	}
	b.ReportMetric(float64((cpuNow()-before).Nanoseconds())/1000/float64(b.N), "cpu-µs/op")
	_ = tp.Shutdown(ctx)
}
