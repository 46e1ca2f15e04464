package tracing

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/garm-dev/garm/daemon/internal/deny"
)

// By default a call has two spans of garmd's, the server span and the
// NATS client span; each step's time is an attribute of the server span,
// the token cache's answer too, and the tool still receives the client
// span's context.
func TestWithoutStepSpansTheStepsAreTimedOnTheServerSpan(t *testing.T) {
	recorded := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorded))
	tr := New(tp, "test")
	ctx, c := tr.StartCall(context.Background(), CallStart{Surface: "http"})
	_, auth := tr.StartStep(ctx, StepAuthenticate)
	EndAuthenticate(auth, true, nil)
	_, input := tr.StartStep(ctx, StepInput)
	time.Sleep(time.Millisecond)
	EndStep(input, nil)
	dctx, hop := tr.StartDispatch(ctx, "calc.v1.Calculator.Add")
	traceparent, _, ok := HopContext(dctx)
	EndStep(hop, nil)
	_, redact := tr.StartStep(ctx, StepRedact)
	refused := deny.Fail(deny.Internal, "redaction", "a detail no span may carry")
	EndStep(redact, refused)
	c.Finish(Result{Tool: "calc.v1.add", Outcome: deny.Outcome(refused), Code: deny.WireCode(refused)})

	spans := recorded.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want the server span and the NATS client span", len(spans))
	}
	dispatch, server := spans[0], spans[1]
	if server.Name() != "execute_tool calc.v1.add" || server.SpanKind() != trace.SpanKindServer || server.Parent().IsValid() {
		t.Fatalf("the server span is %q, %v, parent %v", server.Name(), server.SpanKind(), server.Parent())
	}
	if dispatch.Name() != "request calc.v1.Calculator.Add" || dispatch.SpanKind() != trace.SpanKindClient || dispatch.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Fatalf("the client span is %q, %v, parent %v", dispatch.Name(), dispatch.SpanKind(), dispatch.Parent())
	}
	if want := "00-" + dispatch.SpanContext().TraceID().String() + "-" + dispatch.SpanContext().SpanID().String() + "-01"; !ok || traceparent != want {
		t.Fatalf("the tool gets %q (%v), want the client span's %q", traceparent, ok, want)
	}
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range server.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	for _, step := range []string{StepAuthenticate, StepInput, StepRedact} {
		v, ok := attrs[StepDurationKey(step)]
		if !ok || v.Type() != attribute.INT64 || v.AsInt64() < 0 {
			t.Errorf("%s: %v %v", StepDurationKey(step), v.Emit(), ok)
		}
	}
	if d := attrs[StepDurationKey(StepInput)].AsInt64(); d < int64(time.Millisecond) {
		t.Errorf("validate_input took %d ns, want the millisecond it slept", d)
	}
	if _, ok := attrs[StepDurationKey(StepProjectCards)]; ok {
		t.Error("a step that did not run has a time")
	}
	if v := attrs[TokenCacheHitKey]; v.Type() != attribute.BOOL || !v.AsBool() {
		t.Errorf("%s = %v", TokenCacheHitKey, v.Emit())
	}
	if v := attrs[errorTypeKey]; v.AsString() != "internal" {
		t.Errorf("error.type = %q", v.AsString())
	}
	for _, kv := range server.Attributes() {
		if kv.Value.Type() == attribute.STRING && kv.Value.AsString() == "a detail no span may carry" {
			t.Errorf("%s carries the refusal's detail", kv.Key)
		}
	}
}

// Every step's duration key is garm.step.<name>.duration_ns, the one
// docs/operators.md names.
func TestEachStepHasItsDurationKey(t *testing.T) {
	for _, name := range []string{StepAuthenticate, StepInput, StepInstanceRequire, StepLimit, StepVerifyGrant, StepSpendGrant, StepWriteAhead, StepInstanceAnswer, StepRedact, StepProjectCards} {
		i, ok := stepIndex[name]
		if !ok {
			t.Errorf("%s is not timed", name)
			continue
		}
		if got, want := stepKeys[i], attribute.Key("garm.step."+name+".duration_ns"); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// Under a surface's lent span (MCP), the steps the chain times go onto the
// surface's span, which it ends.
func TestALentSpanGetsTheStepsTimes(t *testing.T) {
	recorded := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorded))
	tr := New(tp, "test")
	ctx, surface := tr.StartCall(context.Background(), CallStart{Surface: SurfaceMCP, MCPMethod: NameMCPCall, Start: time.Now()})
	ctx = Lend(ctx, surface)
	ctx, chain := tr.StartCall(ctx, CallStart{Surface: SurfaceMCP})
	_, step := tr.StartStep(ctx, StepInput)
	EndStep(step, nil)
	chain.Finish(Result{Outcome: "ok"})
	surface.End(Result{})
	spans := recorded.Ended()
	if len(spans) != 1 || !slices.ContainsFunc(spans[0].Attributes(), func(kv attribute.KeyValue) bool { return kv.Key == StepDurationKey(StepInput) }) {
		t.Fatalf("%d spans; the surface's has %v", len(spans), spans[0].Attributes())
	}
}

// A step timed twice (over MCP, the gate's authentication and the
// call's) is one attribute, its last time.
func TestAStepTimedTwiceIsOneAttribute(t *testing.T) {
	recorded := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorded))
	tr := New(tp, "test")
	ctx, c := tr.StartCall(context.Background(), CallStart{Surface: "http"})
	start := time.Now()
	tr.RecordAuthentication(ctx, start, start.Add(time.Hour), false, nil)
	_, s := tr.StartStep(ctx, StepAuthenticate)
	EndAuthenticate(s, true, nil)
	c.Finish(Result{Outcome: "ok"})
	n := 0
	for _, kv := range recorded.Ended()[0].Attributes() {
		switch kv.Key {
		case StepDurationKey(StepAuthenticate):
			n++
			if kv.Value.AsInt64() >= int64(time.Hour) {
				t.Errorf("the first time stayed: %v", kv.Value.Emit())
			}
		case TokenCacheHitKey:
			if !kv.Value.AsBool() {
				t.Error("the first cache answer stayed")
			}
		}
	}
	if n != 1 {
		t.Errorf("%d authentication times", n)
	}
}
