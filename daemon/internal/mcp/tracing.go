package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/tracing"
)

// The endpoint's spans (docs/decisions/0060). The gate authenticates a
// request before it reads the body that may carry the call's trace context
// in _meta, so the server span starts once the method is known, at the
// request's start, and the gate's authentication is recorded in it after
// the fact with the times it took. A tools/call lends its span to the
// chain, which adds its steps and the call's result.

// gateAuth is how the gate's authentication went, for its span.
type gateAuth struct {
	start, end time.Time
	cacheHit   bool
	err        error
}

// startSpan starts the server span of an MCP request for method; nil with
// tracing off.
func (s *Server) startSpan(ctx context.Context, method, version, traceparent, tracestate string, start time.Time, gate gateAuth) (context.Context, *tracing.Call) {
	t := s.chain.Tracer
	if t == nil {
		return ctx, nil
	}
	tp, ts := chain.TraceContext(traceparent, tracestate)
	call := new(tracing.Call)
	ctx = t.StartCall(ctx, tracing.CallStart{
		Surface:            chain.SurfaceMCP,
		Listing:            method == tracing.NameMCPList,
		Traceparent:        tp,
		Tracestate:         ts,
		MCPMethod:          method,
		MCPProtocolVersion: version,
		Start:              start,
	}, call)
	t.RecordAuthentication(ctx, gate.start, gate.end, gate.cacheHit, gate.err)
	return ctx, call
}

// traceRefusal records the span of a request the gate refused before its
// method was read: it has no MCP method, and its ledger row's id.
func (s *Server) traceRefusal(ctx context.Context, headers *chain.Request, version string, start time.Time, gate gateAuth, eventID string, gen *catalogue.Generation, err error) {
	if s.chain.Tracer == nil {
		return
	}
	_, span := s.startSpan(ctx, "", version, headers.Traceparent, headers.Tracestate, start, gate)
	r := tracing.Result{Outcome: deny.Outcome(err), Code: deny.WireCode(err), EventID: eventID}
	if gen != nil {
		r.Digest = gen.Digest
	}
	span.Finish(r)
}

// finishList ends a tools/list span: a result, or the error answered.
func finishList(span *tracing.Call, rerr *rpcError, gen *catalogue.Generation) {
	if span == nil {
		return
	}
	r := tracing.Result{Outcome: deny.Outcome(nil), Digest: gen.Digest}
	switch {
	case rerr == errInternal:
		err := deny.Fail(deny.Internal, "listing", "")
		r.Outcome, r.Code = deny.Outcome(err), deny.WireCode(err)
	case rerr != nil:
		err := deny.Deny(deny.InvalidArgument, "")
		r.Outcome, r.Code = deny.Outcome(err), deny.WireCode(err)
	}
	span.Finish(r)
}

// callTrace is the trace context a tools/call carries: from _meta, or
// from its headers when _meta has none. A call that gives both is refused
// by readCall; its span takes the headers'.
func callTrace(h http.Header, headers *chain.Request, params json.RawMessage) (traceparent, tracestate string) {
	traceparent, tracestate = headers.Traceparent, headers.Tracestate
	if params == nil {
		return traceparent, tracestate
	}
	var p struct {
		Meta struct {
			Traceparent *string `json:"traceparent"`
			Tracestate  *string `json:"tracestate"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return traceparent, tracestate
	}
	if p.Meta.Traceparent != nil && len(h.Values("Traceparent")) == 0 {
		traceparent = *p.Meta.Traceparent
	}
	if p.Meta.Tracestate != nil && len(h.Values("Tracestate")) == 0 {
		tracestate = *p.Meta.Tracestate
	}
	return traceparent, tracestate
}

// invalidParams is how a tools/call refused for its parameters, before
// the chain ran, ended.
func invalidParams(gen *catalogue.Generation) tracing.Result {
	err := deny.Deny(deny.InvalidArgument, "")
	return tracing.Result{Outcome: deny.Outcome(err), Code: deny.WireCode(err), Digest: gen.Digest}
}
