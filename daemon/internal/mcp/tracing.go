package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/tracing"
)

// The endpoint's spans (docs/decisions/0060). The server span of a
// tools/list or tools/call starts once the method is known, at the
// request's start, and is lent to the chain, which authenticates in it,
// adds its steps and records how the request ended; the endpoint only ends
// it. A request the chain alone answers (a header fault, the lifecycle's
// admission) has the chain's own span.

// startSpan starts the server span of an MCP request for method and lends
// it on the context it answers; nil with tracing off.
func (s *Server) startSpan(ctx context.Context, method, version, traceparent, tracestate string, start time.Time) (context.Context, *tracing.Call) {
	t := s.chain.Tracer
	if t == nil {
		return ctx, nil
	}
	tp, ts := chain.TraceContext(traceparent, tracestate)
	ctx, call := t.StartCall(ctx, tracing.CallStart{
		Surface:            chain.SurfaceMCP,
		Listing:            method == tracing.NameMCPList,
		Traceparent:        tp,
		Tracestate:         ts,
		MCPMethod:          method,
		MCPProtocolVersion: version,
		Start:              start,
	})
	return tracing.Lend(ctx, call), call
}

// callTrace is the trace context a tools/call carries: from _meta, read
// by exact key, or from its headers when _meta has none. A call that gives
// both is refused by readCall; its span takes the headers'.
func callTrace(h http.Header, headers *chain.Request, meta map[string]json.RawMessage) (traceparent, tracestate string) {
	traceparent, tracestate = headers.Traceparent, headers.Tracestate
	if raw, ok := meta[metaTraceparent]; ok && len(h.Values("Traceparent")) == 0 {
		traceparent = ""
		_ = json.Unmarshal(raw, &traceparent)
	}
	if raw, ok := meta[metaTracestate]; ok && len(h.Values("Tracestate")) == 0 {
		tracestate = ""
		_ = json.Unmarshal(raw, &tracestate)
	}
	return traceparent, tracestate
}
