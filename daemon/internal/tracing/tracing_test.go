package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

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
			tp, err := fromLookup(ctx, "1.2.3", lookup(tc.env))
			if (err != nil) != tc.refused || (tp != nil) != tc.traces {
				t.Fatalf("provider %v, error %v", tp != nil, err)
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
	var c Call
	if got := tr.StartCall(ctx, CallStart{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, &c); got != ctx || c.On() {
		t.Fatal("a nil tracer started a span")
	}
	if got, span := tr.StartStep(ctx, StepInput); got != ctx || span != nil {
		t.Fatal("a nil tracer started a step")
	}
	EndStep(nil, nil)
	c.Finish(Result{})
	call := new(Call) // the chain keeps it in the call's state
	if n := testing.AllocsPerRun(100, func() {
		_, s := tr.StartStep(ctx, StepRedact)
		EndStep(s, nil)
		tr.StartCall(ctx, CallStart{}, call)
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
