package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/garm-dev/garm/daemon/internal/deny"
)

// ScopeName is the instrumentation scope of garmd's spans.
const ScopeName = "github.com/garm-dev/garm/daemon"

// The names of the step spans.
const (
	StepAuthenticate = "authenticate"
	StepInput        = "validate_input"
	StepVerifyGrant  = "verify_grant"
	StepSpendGrant   = "spend_grant"
	StepWriteAhead   = "audit_write_ahead"
	StepRedact       = "redact"
	StepProjectCards = "project_cards"
)

// The names of the server span before a tool is known, by what the call
// is. A call's span is renamed with the tool only once the tool is
// visible to the caller.
const (
	NameExecuteTool = "execute_tool"
	NameListTools   = "list_tools"
	NameMCPCall     = "tools/call"
	NameMCPList     = "tools/list"
	// NameMCPRequest is an MCP request refused before its method was read.
	NameMCPRequest = "mcp"
)

// SurfaceMCP is the surface whose spans carry the MCP attributes; it is
// chain.SurfaceMCP's spelling.
const SurfaceMCP = "mcp"

// Tracer starts garmd's spans. A nil *Tracer is tracing off.
type Tracer struct {
	tracer  trace.Tracer
	version attribute.KeyValue
}

// New is a Tracer over tp for garmd at version, or nil (tracing off) when
// tp is nil.
func New(tp trace.TracerProvider, version string) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{
		tracer:  tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL)),
		version: VersionKey.String(version),
	}
}

// CallStart says how a call's server span starts.
type CallStart struct {
	// Surface is what the call arrived on (http, mcp).
	Surface string
	// Listing is true for a listing rather than a tool call.
	Listing bool
	// Traceparent and Tracestate are the caller's, already checked (an
	// invalid one is ""): the span is their child when Traceparent is set.
	Traceparent, Tracestate string
	// MCPMethod and MCPProtocolVersion are set on an MCP request.
	MCPMethod, MCPProtocolVersion string
	// Start is when the call began.
	Start time.Time
}

// Call is one call's server span.
type Call struct {
	span trace.Span
	name string
	// lent is true when a surface started the span and lent it to the
	// chain: the chain finishes it and the surface ends it.
	lent bool
}

type lentKey struct{}

// Lend puts c on ctx so that the chain, run by a surface that already
// started the call's span, records into it rather than starting another.
func Lend(ctx context.Context, c *Call) context.Context {
	if c == nil {
		return ctx
	}
	return context.WithValue(ctx, lentKey{}, c)
}

// StartCall starts a call's server span, or takes the one a surface lent
// on ctx. With tracing off it returns ctx and nil.
func (t *Tracer) StartCall(ctx context.Context, s CallStart) (context.Context, *Call) {
	if t == nil {
		return ctx, nil
	}
	if lent, ok := ctx.Value(lentKey{}).(*Call); ok {
		return ctx, &Call{span: lent.span, name: lent.name, lent: true}
	}
	if s.Traceparent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, carrier{traceparent: s.Traceparent, tracestate: s.Tracestate})
	}
	name, operation := NameExecuteTool, !s.Listing
	switch {
	case s.MCPMethod != "":
		name = s.MCPMethod
	case s.Surface == SurfaceMCP:
		// Refused before its method was read.
		name, operation = NameMCPRequest, false
	case s.Listing:
		name = NameListTools
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, SurfaceKey.String(s.Surface), t.version)
	if operation {
		attrs = append(attrs, operationExecuteTool)
	}
	if s.MCPMethod != "" {
		attrs = append(attrs, MCPMethodNameKey.String(s.MCPMethod))
	}
	if s.MCPProtocolVersion != "" {
		attrs = append(attrs, MCPProtocolVersionKey.String(s.MCPProtocolVersion))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(s.Start), trace.WithAttributes(attrs...))
	return ctx, &Call{span: span, name: name}
}

// Result is how a call ended, as far as a span may say.
type Result struct {
	// Tool is the FQN of the tool the call resolved, only once the caller
	// was found to see it; "" otherwise, so that an invisible tool and a
	// missing route leave the same span.
	Tool string
	// Outcome is deny.Outcome's spelling.
	Outcome string
	// Code is the wire code of a refusal or failure; "" when ok.
	Code string
	// EventID is the ledger row's id; "" when the call wrote none.
	EventID string
	// Digest is the catalogue generation the call was decided against.
	Digest string
}

// Finish records how the call ended and, unless a surface lent the span,
// ends it.
func (c *Call) Finish(r Result) {
	if c == nil {
		return
	}
	c.Record(r)
	if !c.lent {
		c.span.End()
	}
}

// Record sets r's attributes on the call's span without ending it.
func (c *Call) Record(r Result) {
	if c == nil || !c.span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, OutcomeKey.String(r.Outcome))
	if r.Tool != "" {
		c.span.SetName(c.name + " " + r.Tool)
		attrs = append(attrs, GenAIToolNameKey.String(r.Tool))
	}
	if r.EventID != "" {
		attrs = append(attrs, EventIDKey.String(r.EventID))
	}
	if r.Digest != "" {
		attrs = append(attrs, DigestKey.String(r.Digest))
	}
	if r.Code != "" {
		attrs = append(attrs, errorTypeKey.String(r.Code))
		c.span.SetStatus(codes.Error, r.Code)
	}
	c.span.SetAttributes(attrs...)
}

// End ends a span a surface started and lent to the chain.
func (c *Call) End() {
	if c != nil {
		c.span.End()
	}
}

// StartStep starts the child span of a step that takes time. With tracing
// off it returns ctx and nil, which EndStep accepts.
func (t *Tracer) StartStep(ctx context.Context, name string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
}

// EndStep ends a step's span; a refusal or failure is recorded by its
// wire code alone.
func EndStep(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		code := deny.WireCode(err)
		span.SetAttributes(errorTypeKey.String(code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// EndAuthenticate ends the authentication step's span, saying whether the
// token was in the cache.
func EndAuthenticate(span trace.Span, cacheHit bool, err error) {
	if span == nil {
		return
	}
	span.SetAttributes(TokenCacheHitKey.Bool(cacheHit))
	EndStep(span, err)
}

// RecordAuthentication records an authentication that happened before
// the call's span could start (the MCP gate authenticates before it reads
// the request that may carry the trace context), as a child of ctx's span
// between start and end.
func (t *Tracer) RecordAuthentication(ctx context.Context, start, end time.Time, cacheHit bool, err error) {
	if t == nil {
		return
	}
	_, span := t.tracer.Start(ctx, StepAuthenticate, trace.WithSpanKind(trace.SpanKindInternal), trace.WithTimestamp(start))
	span.SetAttributes(TokenCacheHitKey.Bool(cacheHit))
	if err != nil {
		code := deny.WireCode(err)
		span.SetAttributes(errorTypeKey.String(code))
		span.SetStatus(codes.Error, code)
	}
	span.End(trace.WithTimestamp(end))
}

// StartDispatch starts the NATS client span of a request to a tool's
// subject.
func (t *Tracer) StartDispatch(ctx context.Context, subject string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	return t.tracer.Start(ctx, "request "+subject, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		messagingNATS, messagingSend, messagingRequest, semconv.MessagingDestinationNameKey.String(subject)))
}

// HopContext is the trace context a tool receives in its invocation: the
// span on ctx (the dispatch span) as a W3C traceparent, and its
// tracestate. ok is false when ctx carries no valid span, and the caller's
// own context then goes on unchanged.
func HopContext(ctx context.Context) (traceparent, tracestate string, ok bool) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", "", false
	}
	var buf [55]byte
	copy(buf[:], "00-")
	tid, sid := sc.TraceID(), sc.SpanID()
	hexTo(buf[3:35], tid[:])
	buf[35] = '-'
	hexTo(buf[36:52], sid[:])
	buf[52] = '-'
	hexTo(buf[53:55], []byte{byte(sc.TraceFlags())})
	return string(buf[:]), sc.TraceState().String(), true
}

func hexTo(dst, src []byte) {
	const digits = "0123456789abcdef"
	for i, b := range src {
		dst[2*i], dst[2*i+1] = digits[b>>4], digits[b&0x0f]
	}
}

// carrier is a caller's checked trace context as a propagation carrier.
type carrier struct{ traceparent, tracestate string }

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}

func (carrier) Set(string, string) {}

func (carrier) Keys() []string { return []string{"traceparent", "tracestate"} }
