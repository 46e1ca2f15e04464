package main

import (
	"context"
	"fmt"
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

func TestTheRatiosPairTwoTargetsOfOneRound(t *testing.T) {
	r := round{by: map[string]measured{
		"garmd":  {loaded: loadResult{PerSecond: 900}, serial: loadResult{P50us: 630}, cpuPerCall: 90, busCPUPerCall: 34},
		"bridge": {loaded: loadResult{PerSecond: 1000}, serial: loadResult{P50us: 600}, cpuPerCall: 70, busCPUPerCall: 30},
	}}
	want := map[string]float64{
		"garmd / bridge throughput, 32 callers":               0.9,
		"garmd − bridge p50, 1 caller":                        30,
		"garmd − bridge CPU per call, 32 callers":             20,
		"garmd − bridge nats-server CPU per call, 32 callers": 4,
	}
	seen := 0
	for _, rt := range ratios(32) {
		got, ok := rt.of(r)
		w, wanted := want[rt.name]
		switch {
		case wanted && (!ok || got != w):
			t.Errorf("%s: %v (%v), want %v", rt.name, got, ok, w)
		case wanted:
			seen++
		case ok && (rt.name == "garmd / direct throughput, 32 callers" || rt.name == "garmd − compare p50, 1 caller"):
			t.Errorf("%s: a figure of a target the round did not measure", rt.name)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of the %d figures were reported", seen, len(want))
	}
}

// --otlp-sample traces a share of the calls with the SDK's trace-id ratio
// sampler, and all of them with always_on.
func TestTheSampleRatioIsTheSDKsSampler(t *testing.T) {
	for ratio, want := range map[float64]string{
		1:   "[OTEL_TRACES_SAMPLER=always_on]",
		0.1: "[OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=0.1]",
	} {
		if got := fmt.Sprint(sampler(ratio)); got != want {
			t.Errorf("%v: %s, want %s", ratio, got, want)
		}
	}
}
