package chain

import (
	"context"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The chain's spans (docs/decisions/0060, 0143): the call's server span,
// the dispatch's NATS client span, and the time of each step that takes
// time, on the server span or in a child span of its own, as the Tracer
// was built. With tracing off (c.Tracer nil) every helper here costs a
// nil check.

// startSpan starts the call's server span, a child of the caller's
// traceparent when it is valid; or takes the one a surface lent. The call
// lives in the context that carries it (tracing.StartCall), not in the
// call's state, which stays where Run put it.
func (c *Chain) startSpan(ctx context.Context, req *Request, start time.Time) (context.Context, *tracing.Call) {
	if c.Tracer == nil {
		return ctx, nil
	}
	surface := req.Surface
	if surface == "" {
		surface = SurfaceHTTP
	}
	return c.Tracer.StartCall(ctx, tracing.CallStart{
		Surface:     surface,
		Listing:     req.Path == catalogue.ListingMethod,
		Traceparent: traceparent(req.Traceparent),
		Tracestate:  tracestate(req.Tracestate),
		Start:       start,
	})
}

// finishSpan records how the call ended. The tool is named only once the
// caller was found to see it (st.tool), so an invisible tool's span is a
// missing route's.
func finishSpan(span *tracing.Call, st *state, err error, eventID string) {
	if !span.On() {
		return
	}
	r := tracing.Result{Outcome: deny.Outcome(err), EventID: eventID, Digest: st.row.CatalogueDigest}
	if st.tool != nil {
		r.Tool = st.tool.FQN
	}
	if err != nil {
		r.Code = deny.WireCode(err)
	}
	span.Finish(r)
}

// authenticate is step 1 in its span.
func (c *Chain) authenticate(ctx context.Context, authorization string, gen *catalogue.Generation) (*call.Principal, error) {
	if c.Tracer == nil {
		return c.Authn.Authenticate(ctx, authorization, gen)
	}
	ctx, span := c.Tracer.StartStep(ctx, tracing.StepAuthenticate)
	p, hit, err := c.Authn.AuthenticateCached(ctx, authorization, gen)
	tracing.EndAuthenticate(span, hit, err)
	return p, err
}

// dispatch is step 6's request in its NATS client span. With tracing on,
// the tool receives that span's context, so its own span is garmd's
// child; with tracing off, the caller's context goes on unchanged.
func (c *Chain) dispatch(ctx context.Context, tool *call.Tool, p *call.Principal, hop *dispatch.Hop, in protoreflect.Message) (protoreflect.Message, error) {
	if c.Tracer == nil {
		return c.Dispatch.Call(ctx, tool, dispatch.Invocation(p, hop), in)
	}
	ctx, span := c.Tracer.StartDispatch(ctx, tool.Subject)
	if tp, ts, ok := tracing.HopContext(ctx); ok {
		hop.Traceparent, hop.Tracestate = tp, ts
	}
	out, err := c.Dispatch.Call(ctx, tool, dispatch.Invocation(p, hop), in)
	tracing.EndStep(span, err)
	return out, err
}

// TraceContext is a caller's traceparent and tracestate as garmd takes
// them: each "" when it is not well formed (headers.go).
func TraceContext(parent, state string) (string, string) {
	tp := traceparent(parent)
	if tp == "" {
		return "", ""
	}
	return tp, tracestate(state)
}

// record is step 9's write. With tracing on, a recorder that logs the row
// is given the call's context, so the line carries the call's trace.
func (c *Chain) record(ctx context.Context, row *ledgerv1.Event) {
	if c.Tracer != nil {
		if rc, ok := c.Recorder.(ledger.ContextRecorder); ok {
			rc.RecordContext(ctx, row)
			return
		}
	}
	c.Recorder.Record(row)
}
