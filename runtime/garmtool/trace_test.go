package garmtool_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
)

const (
	garmdTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	garmdSpan  = "00f067aa0ba902b7"
)

// fromGarmd gives the invocation garmd's span context, as garmd sends it.
func fromGarmd(inv *toolv1.InvocationContext) {
	inv.Traceparent = "00-" + garmdTrace + "-" + garmdSpan + "-01"
	inv.Tracestate = "garm=1"
}

func recording(t *testing.T) (*tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return exp, tp
}

func attrs(s tracetest.SpanStub) map[attribute.Key]string {
	out := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		out[kv.Key] = kv.Value.Emit()
	}
	return out
}

func TestEachRequestIsAServerSpanUnderGarmdsAndTheHandlerNestsUnderIt(t *testing.T) {
	exp, tp := recording(t)
	var handlerSpan trace.SpanContext
	h := serve(t, func(ctx context.Context, req proto.Message) (proto.Message, error) {
		handlerSpan = trace.SpanContextFromContext(ctx)
		_, own := tp.Tracer("the tool's own").Start(ctx, "lookup")
		own.End()
		return req, nil
	}, garmtool.WithTracerProvider(tp))
	if _, err := callEcho(t, h, "a value of the request", garmtooltest.WithInvocation(fromGarmd)); err != nil {
		t.Fatal(err)
	}
	// The request's span ends once the answer is sent.
	waitFor(t, testContext(t), "two spans", func() bool { return len(exp.GetSpans()) == 2 })
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the request's and the handler's own", len(spans))
	}
	own, server := spans[0], spans[1]
	if server.SpanKind != trace.SpanKindServer || server.Name != echo.FQN {
		t.Fatalf("the request's span is %s %q", server.SpanKind, server.Name)
	}
	if server.SpanContext.TraceID().String() != garmdTrace || server.Parent.SpanID().String() != garmdSpan || !server.Parent.IsRemote() {
		t.Errorf("the request's span is not garmd's child: parent %s/%s", server.Parent.TraceID(), server.Parent.SpanID())
	}
	if server.SpanContext.TraceState().String() != "garm=1" {
		t.Errorf("tracestate %q", server.SpanContext.TraceState().String())
	}
	if handlerSpan.SpanID() != server.SpanContext.SpanID() || own.Parent.SpanID() != server.SpanContext.SpanID() {
		t.Errorf("the handler's context does not carry the request's span")
	}
	want := map[attribute.Key]string{
		garmtool.ToolFQNKey: echo.FQN, garmtool.OutcomeKey: garmtool.OutcomeOK,
		"messaging.system": "nats", "messaging.destination.name": echo.Subject,
	}
	if got := attrs(server); len(got) != len(want) || got[garmtool.ToolFQNKey] != want[garmtool.ToolFQNKey] || got[garmtool.OutcomeKey] != garmtool.OutcomeOK ||
		got["messaging.destination.name"] != echo.Subject || got["messaging.system"] != "nats" {
		t.Errorf("attributes %v, want %v", got, want)
	}
}

func TestARequestsSpanRecordsItsRefusalCode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler toolbind.Handler
		code    string
		outcome string
	}{
		{"a refusal", failing(toolbind.NotFound("no customer c-17")), "404", garmtool.OutcomeRefused},
		{"a failure", failing(context.Canceled), "500", garmtool.OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp, tp := recording(t)
			h := serve(t, tc.handler, garmtool.WithTracerProvider(tp))
			_, err := callEcho(t, h, "x", garmtooltest.WithInvocation(fromGarmd))
			wantAnswer(t, err, tc.code, map[string]string{"404": "no customer c-17", "500": "context canceled"}[tc.code])
			waitFor(t, testContext(t), "the span", func() bool { return len(exp.GetSpans()) == 1 })
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			got := attrs(spans[0])
			if got[garmtool.OutcomeKey] != tc.outcome || got[garmtool.RefusalCodeKey] != tc.code || got["error.type"] != tc.code ||
				spans[0].Status.Code != codes.Error || spans[0].Status.Description != tc.code {
				t.Errorf("attributes %v, status %v", got, spans[0].Status)
			}
			for _, v := range got {
				if v == "no customer c-17" || v == "x" {
					t.Errorf("the span carries a value of the call: %v", got)
				}
			}
		})
	}
}
