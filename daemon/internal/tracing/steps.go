package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/garm-dev/garm/daemon/internal/deny"
)

// A step's time has one of two homes (docs/decisions/0143). By default it
// is an attribute of the call's server span, StepDurationKey of the step's
// name, in nanoseconds: the server span and the NATS client span are then
// garmd's only spans of a call, and a sampled call costs the SDK and the
// exporter two spans instead of six or more. WithStepSpans (--trace-steps)
// gives each step a child span instead, the tree of docs/decisions/0060.

// StepDurationKey is the server span's attribute that holds how long the
// step name took, in nanoseconds, when steps have no spans of their own:
// garm.step.<name>.duration_ns.
func StepDurationKey(name string) attribute.Key {
	return attribute.Key("garm.step." + name + ".duration_ns")
}

// stepNames are the steps timed on a call's span, in the chain's order.
var stepNames = [...]string{
	StepAuthenticate, StepInput, StepInstanceRequire, StepLimit, StepVerifyGrant,
	StepWriteAhead, StepSpendGrant, StepInstanceAnswer, StepRedact, StepProjectCards,
}

// stepKeys are stepNames' duration keys, and stepIndex their places.
var (
	stepKeys = func() (keys [len(stepNames)]attribute.Key) {
		for i, name := range stepNames {
			keys[i] = StepDurationKey(name)
		}
		return keys
	}()
	stepIndex = func() map[string]int {
		index := map[string]int{}
		for i, name := range stepNames {
			index[name] = i
		}
		return index
	}()
)

// stepTimes are a call's steps' times, kept until its span's attributes
// are set.
type stepTimes struct {
	took [len(stepNames)]time.Duration
	// ran has bit i set when step i was timed.
	ran uint16
	// cacheHit is 0 before authentication, else 1 (a miss) or 2 (a hit).
	cacheHit uint8
}

func (t *stepTimes) set(step int, took time.Duration) {
	t.took[step] = took
	t.ran |= 1 << step
}

func (t *stepTimes) setCacheHit(hit bool) {
	t.cacheHit = 1
	if hit {
		t.cacheHit = 2
	}
}

// appendTo appends the times to attrs as attributes, and forgets them.
func (t *stepTimes) appendTo(attrs []attribute.KeyValue) []attribute.KeyValue {
	for i := range stepNames {
		if t.ran&(1<<i) != 0 {
			attrs = append(attrs, stepKeys[i].Int64(int64(t.took[i])))
		}
	}
	if t.cacheHit != 0 {
		attrs = append(attrs, TokenCacheHitKey.Bool(t.cacheHit == 2))
	}
	*t = stepTimes{}
	return attrs
}

// Step is a step being timed: a child span of its own, or a start time
// whose duration goes onto the call's span when the step ends. The zero
// Step is a step not recorded (tracing off, or the call not sampled);
// EndStep accepts it.
type Step struct {
	// span is the step's own span (WithStepSpans), or the NATS client
	// span of a dispatch in either shape.
	span trace.Span
	// call is the call whose span gets the step's time, without step spans.
	call  *Call
	step  int
	start time.Time
}

// On reports whether the step is recorded.
func (s Step) On() bool { return s.span != nil || s.call != nil }

// StartStep starts timing a step that takes time: its child span under
// WithStepSpans, else a start time for the call's span. With tracing off,
// or when the call's span does not record (the call was not sampled), it
// returns ctx and the zero Step.
func (t *Tracer) StartStep(ctx context.Context, name string) (context.Context, Step) {
	if !t.records(ctx) {
		return ctx, Step{}
	}
	if !t.steps {
		c := callOf(ctx)
		i, ok := stepIndex[name]
		if c == nil || !ok {
			return ctx, Step{}
		}
		return ctx, Step{call: c, step: i, start: time.Now()}
	}
	ctx, span := t.tracer.Start(ctx, name, internalSpan...)
	return ctx, Step{span: span}
}

// records reports whether the span on ctx, the call's or a step's,
// records: only then are children started. A child of a span that does
// not record would not be sampled by any standard sampler (a parent-based
// one follows the parent; a trace-id ratio decides the same trace alike;
// always-on would have sampled the parent), so the SDK would only
// allocate a span that records nothing, and a context for it: two
// allocations and about half a microsecond per step of every unsampled
// call.
func (t *Tracer) records(ctx context.Context) bool {
	return t != nil && trace.SpanFromContext(ctx).IsRecording()
}

// EndStep ends a step. A step with a span of its own records a refusal or
// failure by its wire code alone; a step timed for the call's span adds
// its duration there, and the call's span says how the call ended.
func EndStep(s Step, err error) {
	switch {
	case s.span != nil:
		if err != nil {
			code := deny.WireCode(err)
			s.span.SetAttributes(errorTypeKey.String(code))
			s.span.SetStatus(codes.Error, code)
		}
		s.span.End()
	case s.call != nil:
		s.call.timed.set(s.step, time.Since(s.start))
	}
}

// EndAuthenticate ends the authentication step, saying whether the token
// was in the cache: on the step's span, or on the call's.
func EndAuthenticate(s Step, cacheHit bool, err error) {
	switch {
	case s.span != nil:
		hit := tokenUncached
		if cacheHit {
			hit = tokenCached
		}
		s.span.SetAttributes(hit...)
	case s.call != nil:
		s.call.timed.setCacheHit(cacheHit)
	}
	EndStep(s, err)
}

// RecordAuthentication records an authentication that happened before
// the call's span could start (the MCP gate authenticates before it reads
// the request that may carry the trace context), between start and end:
// as a child of ctx's span under WithStepSpans, else on the call's span.
func (t *Tracer) RecordAuthentication(ctx context.Context, start, end time.Time, cacheHit bool, err error) {
	if !t.records(ctx) {
		return
	}
	if !t.steps {
		if c := callOf(ctx); c != nil {
			c.timed.set(stepIndex[StepAuthenticate], end.Sub(start))
			c.timed.setCacheHit(cacheHit)
		}
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
