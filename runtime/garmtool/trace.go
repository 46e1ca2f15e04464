package garmtool

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
)

// TracerName is the instrumentation scope of the runtime's spans.
const TracerName = "github.com/garm-dev/garm/runtime/garmtool"

// The attributes of a request's span. They say which tool, how it ended
// and with which code; never a value of the request, the answer or the
// invocation beyond its trace context.
const (
	// ToolFQNKey is the tool's fully qualified name.
	ToolFQNKey = attribute.Key("garm.tool.fqn")
	// OutcomeKey is how the request ended: OutcomeOK, OutcomeRefused or
	// OutcomeError.
	OutcomeKey = attribute.Key("garm.outcome")
	// RefusalCodeKey is the code answered instead of a response: the tool's
	// refusal or the runtime's.
	RefusalCodeKey = attribute.Key("garm.tool.refusal_code")
)

// The outcomes a request's span records.
const (
	OutcomeOK      = "ok"
	OutcomeRefused = "refused"
	OutcomeError   = "error"
)

// tracerOf is the tracer of the provider given, or of the global provider
// (which follows whatever is set globally later).
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// startSpan starts the server span of one request, the child of the trace
// context garmd sent in the invocation (inv may be nil: it did not
// decode). The span is on the returned context, which is the handler's.
func (srv *server) startSpan(ep *endpoint, inv *toolv1.InvocationContext) (context.Context, trace.Span) {
	ctx := srv.base
	if tp := inv.GetTraceparent(); tp != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, invocationCarrier{traceparent: tp, tracestate: inv.GetTracestate()})
	}
	return srv.tracer.Start(ctx, ep.ref.FQN, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		ToolFQNKey.String(ep.ref.FQN),
		attribute.String("messaging.system", "nats"),
		attribute.String("messaging.destination.name", ep.subject),
	))
}

// endSpan records how the request ended (code "" for a response) and ends
// the span.
func endSpan(span trace.Span, code string) {
	switch {
	case code == "":
		span.SetAttributes(OutcomeKey.String(OutcomeOK))
	case toolbind.IsRefusalCode(code):
		span.SetAttributes(OutcomeKey.String(OutcomeRefused), RefusalCodeKey.String(code), attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	default:
		span.SetAttributes(OutcomeKey.String(OutcomeError), RefusalCodeKey.String(code), attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// invocationCarrier is an invocation's trace context as a propagation
// carrier.
type invocationCarrier struct{ traceparent, tracestate string }

func (c invocationCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}

func (invocationCarrier) Set(string, string) {}

func (invocationCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }
