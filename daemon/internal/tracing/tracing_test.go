package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestTheVariablesDecideWhetherGarmdTracesAndHow(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		traces  bool
		refused bool
	}{
		{"no endpoint", map[string]string{"OTEL_SERVICE_NAME": "x"}, false, false},
		{"an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, false},
		{"a traces endpoint over grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, false},
		{"the SDK disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, false, false},
		{"no traces exporter", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, false, false},
		{"http/json", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, batcher, err := fromLookup(ctx, "1.2.3", lookup(tc.env))
			if (err != nil) != tc.refused || (tp != nil) != tc.traces || (batcher != nil) != tc.traces {
				t.Fatalf("provider %v, batcher %v, error %v", tp != nil, batcher != nil, err)
			}
			if tp != nil {
				_ = tp.Shutdown(ctx)
			}
		})
	}
}

func TestANilTracerIsTracingOff(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	got, c := tr.StartCall(ctx, CallStart{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
	if got != ctx || c.On() {
		t.Fatal("a nil tracer started a span")
	}
	if got, step := tr.StartStep(ctx, StepInput); got != ctx || step.On() {
		t.Fatal("a nil tracer started a step")
	}
	EndStep(Step{}, nil)
	c.Finish(Result{})
	if n := testing.AllocsPerRun(100, func() {
		_, s := tr.StartStep(ctx, StepRedact)
		EndStep(s, nil)
		_, call := tr.StartCall(ctx, CallStart{})
		call.Finish(Result{Outcome: "ok"})
	}); n != 0 {
		t.Errorf("tracing off allocates %v per call", n)
	}
}

func TestTheHopCarriesTheSpanOnTheContextAsATraceparent(t *testing.T) {
	ctx := withRemoteParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v")
	tp, ts, ok := HopContext(ctx)
	if !ok || tp != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || ts != "k=v" {
		t.Fatalf("%q %q %v", tp, ts, ok)
	}
	if _, _, ok := HopContext(context.Background()); ok {
		t.Error("a context without a span has a hop context")
	}
	// An unsampled caller stays unsampled; a tracestate that does not
	// parse is dropped.
	ctx = withRemoteParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "not a tracestate")
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() || !sc.IsRemote() || sc.TraceState().Len() != 0 {
		t.Errorf("%v", sc)
	}
}

func TestALogLineWithASpanSaysWhichTrace(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("component", "test")
	ctx := withRemoteParent(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "")
	logger.InfoContext(ctx, "with")
	logger.Info("without")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(lines[0], `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"`) || !strings.Contains(lines[0], `"component":"test"`) {
		t.Errorf("%s", lines[0])
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("%s", lines[1])
	}
}

// A call that is not sampled starts no child span: a child would not be
// sampled either, and would only cost its allocations. The tool then gets
// the call's own unsampled span context; a sampled call starts them all:
// a span per step with step spans, the dispatch's alone without.
func TestAnUnsampledCallStartsNoChildSpans(t *testing.T) {
	for _, shape := range []struct {
		name    string
		opts    []Option
		started int
	}{
		{"step spans", []Option{WithStepSpans()}, 4},
		{"the default shape", nil, 2},
	} {
		for _, tc := range []struct {
			name        string
			sampler     sdktrace.Sampler
			traceparent string
			children    bool
		}{
			{"never sampled", sdktrace.NeverSample(), "", false},
			{"a caller that did not sample", sdktrace.ParentBased(sdktrace.AlwaysSample()), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", false},
			{"a ratio that leaves the trace out", sdktrace.TraceIDRatioBased(0), "", false},
			{"always sampled", sdktrace.AlwaysSample(), "", true},
			{"a caller that sampled", sdktrace.ParentBased(sdktrace.NeverSample()), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		} {
			t.Run(shape.name+"/"+tc.name, func(t *testing.T) {
				recorded := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(tc.sampler), sdktrace.WithSpanProcessor(recorded))
				tr := New(tp, "test", shape.opts...)
				ctx, c := tr.StartCall(context.Background(), CallStart{Surface: "http", Traceparent: tc.traceparent})
				_, step := tr.StartStep(ctx, StepInput)
				EndStep(step, nil)
				dctx, hop := tr.StartDispatch(ctx, "calc.v1.Calculator.Add")
				traceparent, _, ok := HopContext(dctx)
				EndStep(hop, nil)
				tr.RecordAuthentication(ctx, time.Now(), time.Now(), true, nil)
				c.Finish(Result{Outcome: "ok"})

				started := len(recorded.Started())
				if tc.children {
					if !step.On() || !hop.On() || started != shape.started {
						t.Fatalf("a sampled call started %d spans (step %v, hop %v), want %d", started, step.On(), hop.On(), shape.started)
					}
					return
				}
				if step.On() || hop.On() || started != 0 {
					t.Fatalf("an unsampled call started %d recording spans, a step %v, a hop %v", started, step.On(), hop.On())
				}
				call := trace.SpanContextFromContext(ctx)
				if !ok || traceparent != "00-"+call.TraceID().String()+"-"+call.SpanID().String()+"-00" {
					t.Fatalf("the tool gets %q (%v), want the call's own unsampled context", traceparent, ok)
				}
			})
		}
	}
}
