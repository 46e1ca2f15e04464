package tracing

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of garmd's spans.
const ScopeName = "github.com/garm-dev/garm/daemon"

// The names of the step spans.
const (
	StepAuthenticate = "authenticate"
	StepInput        = "validate_input"
	// StepInstanceRequire is step 4, the tool's require rules; only a tool
	// that declares some has the span.
	StepInstanceRequire = "instance_require"
	// StepLimit counts the call against its tool's limits; only a tool
	// that declares some has the span.
	StepLimit       = "limit"
	StepVerifyGrant = "verify_grant"
	StepSpendGrant  = "spend_grant"
	StepWriteAhead  = "audit_write_ahead"
	// StepInstanceAnswer is step 7, the tool's reveal rules and row
	// filters; only a tool that declares some has the span.
	StepInstanceAnswer = "instance_answer"
	StepRedact         = "redact"
	StepProjectCards   = "project_cards"
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
//
// A span costs what the SDK allocates for it and little more: the options
// and attribute lists that do not change from call to call are built once,
// and the names that join a tool's name to an operation are kept per tool
// (docs/decisions/0060 reports the figures).
type Tracer struct {
	tracer  trace.Tracer
	version attribute.KeyValue
	// steps is the step-span shape (WithStepSpans): a child span per step.
	steps bool

	mu    sync.RWMutex
	names map[[2]string]string
	hops  map[string]*hop
}

// hop is what a dispatch span to one subject always carries.
type hop struct {
	name  string
	attrs []attribute.KeyValue
}

// The span start options that never change.
var (
	serverSpan    = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	internalSpan  = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	clientSpan    = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	tokenCached   = []attribute.KeyValue{TokenCacheHitKey.Bool(true)}
	tokenUncached = []attribute.KeyValue{TokenCacheHitKey.Bool(false)}
)

// Option changes how a Tracer shapes a call's trace.
type Option func(*Tracer)

// WithStepSpans gives every step that takes time a child span of its own,
// the tree docs/decisions/0060 specified (garmd's --trace-steps). Without
// it a call has two spans of garmd's, the server span and the NATS client
// span, and each step's time is an attribute of the server span
// (docs/decisions/0143).
func WithStepSpans() Option { return func(t *Tracer) { t.steps = true } }

// New is a Tracer over tp for garmd at version, or nil (tracing off) when
// tp is nil.
func New(tp trace.TracerProvider, version string, opts ...Option) *Tracer {
	if tp == nil {
		return nil
	}
	t := &Tracer{
		tracer:  tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL)),
		version: VersionKey.String(version),
		names:   map[[2]string]string{},
		hops:    map[string]*hop{},
	}
	for _, o := range opts {
		o(t)
	}
	return t
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
	tracer *Tracer
	span   trace.Span
	name   string
	// lent is the surface's Call when a surface started the span and
	// lent it to the chain: the chain records into it and the surface
	// ends it.
	lent *Call
	// recorded is set once a result was recorded.
	recorded bool
	// What the server span's attributes say of the call's start, set with
	// the result's in one call when the call ends. The attributes
	// themselves are built only then, and only for a span that records: a
	// call that is not sampled carries no room for them (an array of them
	// in every call's state was most of the bytes an unsampled call added,
	// and so of the collector's work; docs/decisions/0143).
	surface, mcpMethod, mcpVersion string
	operation                      bool
	// timed holds each step's time when steps have no spans of their
	// own: a few words in the call's state rather than an attribute each,
	// so that a call that is not sampled carries no room for them.
	timed stepTimes
}

// maxCallAttributes bounds the attributes of a call's server span known
// at its start and its end, besides the steps' times.
const maxCallAttributes = 12

// callAttributeRoom is room for a recording call's attributes while they
// are handed to the SDK, which copies them: a traced call allocated the
// room, 1.5 KB, on every call.
var callAttributeRoom = sync.Pool{New: func() any { return new([maxCallAttributes + len(stepNames) + 1]attribute.KeyValue) }}

type (
	lentKey struct{}
	// callKey finds the call whose span records its steps' times, when
	// steps have no spans of their own.
	callKey struct{}
)

// callOf is the call on ctx whose span records, or nil: the surface's when
// it lent its span.
func callOf(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	if c != nil && c.lent != nil {
		c = c.lent
	}
	if c == nil || c.span == nil || !c.span.IsRecording() {
		return nil
	}
	return c
}

// Lend puts c on ctx so that the chain, run by a surface that already
// started the call's span, records into it rather than starting another.
// The surface then only ends it (End).
func Lend(ctx context.Context, c *Call) context.Context {
	if c == nil || c.span == nil {
		return ctx
	}
	return context.WithValue(ctx, lentKey{}, c)
}

// StartCall starts a call's server span, or takes the one a surface lent
// on ctx, and answers the context that carries the call and the call. With
// tracing off (t nil) it answers ctx and a call that records nothing. The
// span starts at s.Start when a surface started the call before the span
// could (MCP); otherwise now.
//
// The call lives in the context node that carries it (callContext): one
// allocation for both, and none that makes the chain's state escape.
func (t *Tracer) StartCall(ctx context.Context, s CallStart) (context.Context, *Call) {
	if t == nil {
		return ctx, nil
	}
	cc := &callContext{Context: ctx}
	ctx, c := cc, &cc.call
	if lent, ok := ctx.Value(lentKey{}).(*Call); ok {
		*c = Call{tracer: t, span: lent.span, lent: lent}
		return ctx, c
	}
	*c = Call{tracer: t}
	if s.Traceparent != "" {
		ctx = withRemoteParent(ctx, s.Traceparent, s.Tracestate)
	}
	operation := !s.Listing
	c.name = NameExecuteTool
	switch {
	case s.MCPMethod != "":
		c.name = s.MCPMethod
	case s.Surface == SurfaceMCP:
		// Refused before its method was read.
		c.name, operation = NameMCPRequest, false
	case s.Listing:
		c.name = NameListTools
	}
	c.surface, c.operation, c.mcpMethod, c.mcpVersion = s.Surface, operation, s.MCPMethod, s.MCPProtocolVersion
	if s.Surface == SurfaceMCP {
		ctx, c.span = t.tracer.Start(ctx, c.name, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(s.Start))
	} else {
		ctx, c.span = t.tracer.Start(ctx, c.name, serverSpan...)
	}
	return ctx, c
}

// callContext is a context carrying a call under callKey, the call held in
// the node itself.
type callContext struct {
	context.Context
	call Call
}

func (c *callContext) Value(key any) any {
	if key == (callKey{}) {
		return &c.call
	}
	return c.Context.Value(key)
}

// On reports whether c records a span.
func (c *Call) On() bool { return c != nil && c.span != nil }

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
	if c == nil || c.span == nil {
		return
	}
	c.Record(r)
	if c.lent == nil {
		c.span.End()
	}
}

// Record sets r's attributes on the call's span without ending it.
func (c *Call) Record(r Result) {
	if c == nil || c.span == nil {
		return
	}
	if c.lent != nil {
		c.lent.Record(r)
		return
	}
	c.recorded = true
	if !c.span.IsRecording() {
		return
	}
	room := callAttributeRoom.Get().(*[maxCallAttributes + len(stepNames) + 1]attribute.KeyValue)
	attrs := append(room[:0], SurfaceKey.String(c.surface), c.tracer.version)
	if c.operation {
		attrs = append(attrs, operationExecuteTool)
	}
	if c.mcpMethod != "" {
		attrs = append(attrs, MCPMethodNameKey.String(c.mcpMethod))
	}
	if c.mcpVersion != "" {
		attrs = append(attrs, MCPProtocolVersionKey.String(c.mcpVersion))
	}
	attrs = append(attrs, OutcomeKey.String(r.Outcome))
	if r.Tool != "" {
		c.span.SetName(c.tracer.join(c.name, r.Tool))
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
	c.span.SetAttributes(c.timed.appendTo(attrs)...)
	// The SDK copied them; the pool keeps no call's values.
	clear(room[:])
	callAttributeRoom.Put(room)
}

// join is prefix + " " + suffix, kept: a span's name joins an operation
// to a served tool's name or subject, and there are as many as the
// catalogue has tools.
func (t *Tracer) join(prefix, suffix string) string {
	k := [2]string{prefix, suffix}
	t.mu.RLock()
	name, ok := t.names[k]
	t.mu.RUnlock()
	if ok {
		return name
	}
	name = prefix + " " + suffix
	t.mu.Lock()
	if len(t.names) < maxKept {
		t.names[k] = name
	}
	t.mu.Unlock()
	return name
}

// maxKept bounds what a Tracer keeps per tool: past it, names are built
// per call.
const maxKept = 1 << 16

// End ends a span a surface started and lent to the chain. When the
// chain never ran (the surface refused the request first), r is recorded.
func (c *Call) End(r Result) {
	if c == nil || c.span == nil {
		return
	}
	if !c.recorded {
		c.Record(r)
	}
	c.span.End()
}

// StartDispatch starts the NATS client span of a request to a tool's
// subject, in either shape of a call's trace; none when the call's span
// does not record, and the tool then receives the call's (unsampled) span
// context.
func (t *Tracer) StartDispatch(ctx context.Context, subject string) (context.Context, Step) {
	if !t.records(ctx) {
		return ctx, Step{}
	}
	h := t.hop(subject)
	ctx, span := t.tracer.Start(ctx, h.name, clientSpan...)
	span.SetAttributes(h.attrs...)
	return ctx, Step{span: span}
}

// hop is what a dispatch span to subject carries, kept per subject.
func (t *Tracer) hop(subject string) *hop {
	t.mu.RLock()
	h, ok := t.hops[subject]
	t.mu.RUnlock()
	if ok {
		return h
	}
	h = &hop{
		name:  "request " + subject,
		attrs: []attribute.KeyValue{messagingNATS, messagingSend, messagingRequest, semconv.MessagingDestinationNameKey.String(subject)},
	}
	t.mu.Lock()
	if len(t.hops) < maxKept {
		t.hops[subject] = h
	}
	t.mu.Unlock()
	return h
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

// withRemoteParent is ctx with the caller's span as the remote parent of
// the next span started. traceparent was checked (a version-00
// traceparent of lowercase hex); a tracestate that does not parse is
// dropped, as the W3C propagator drops it.
func withRemoteParent(ctx context.Context, traceparent, tracestate string) context.Context {
	var cfg trace.SpanContextConfig
	unhex(cfg.TraceID[:], traceparent[3:35])
	unhex(cfg.SpanID[:], traceparent[36:52])
	var flags [1]byte
	unhex(flags[:], traceparent[53:55])
	cfg.TraceFlags = trace.TraceFlags(flags[0]) & trace.FlagsSampled
	cfg.Remote = true
	if tracestate != "" {
		if ts, err := trace.ParseTraceState(tracestate); err == nil {
			cfg.TraceState = ts
		}
	}
	sc := trace.NewSpanContext(cfg)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithRemoteSpanContext(ctx, sc)
}

func unhex(dst []byte, src string) {
	for i := range dst {
		dst[i] = fromHex(src[2*i])<<4 | fromHex(src[2*i+1])
	}
}

func fromHex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return 0
}
