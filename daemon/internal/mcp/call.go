package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
)

// unroutablePrefix marks the path a row records for a call naming no
// served tool: no route starts with it.
const unroutablePrefix = "mcp:"

// callTool answers tools/call by running the chain in process: the
// arguments are the request body, and the chain's answer is mapped by
// callError. Whatever is wrong with the call's params or _meta is told to
// the chain, which refuses and records it once it knows who called.
func (s *Server) callTool(ctx context.Context, w http.ResponseWriter, h http.Header, headers *chain.Request, req *rpcRequest, e era) {
	creq := s.chainRequest(headers, e)
	var name string
	args, fault := callArguments(req.params, &name)
	if name != "" {
		creq.Path, creq.ToolName = unroutablePrefix+name, name
	}
	var in callInput
	var state string
	if fault == "" {
		in, state, fault = readCall(h, headers, req)
	}
	if fault == "" && state != "" {
		claims, err := s.openState(state, name, time.Now())
		if err != nil {
			creq.ApprovalFault = err.Error()
		} else {
			in.approval, creq.ApprovalDigest = claims.ID, claims.Digest
			creq.ApprovalHolder = &chain.Holder{Subject: claims.Sub, Tenant: claims.Tenant, Act: claims.Act}
		}
	}
	creq.ArgumentFault = fault
	creq.Body = args
	creq.TimeoutMs, creq.Traceparent, creq.Tracestate = in.timeoutMs, in.traceparent, in.tracestate
	creq.CorrelationID, creq.Grant, creq.Approval = in.correlationID, in.grant, in.approval
	// A client that goes away does not cancel a dispatched call (design
	// 7.11): its effect would be unknowable.
	resp := s.chain.Run(chain.Detach(ctx), creq)
	rowHeaders(w, resp)
	if fault != "" && resp.Code == codeInvalidArgument {
		writeError(w, req.id, errInvalidParams)
		return
	}
	if s.askHuman(w, req.id, resp, e, req.meta) {
		return
	}
	if rerr := callError(resp.Code); rerr != nil {
		if rerr == errUnauthenticated {
			w.Header().Set("Www-Authenticate", s.challenge)
		}
		writeError(w, req.id, rerr)
		return
	}
	writeResult(w, req.id, s.result(resp, e))
}

// callArguments reads a tools/call's name into name and answers its
// arguments, or "" and a fault for the row.
func callArguments(params map[string]json.RawMessage, name *string) ([]byte, string) {
	if params == nil {
		return nil, "tools/call has no params"
	}
	if raw, ok := params["name"]; !ok || json.Unmarshal(raw, name) != nil || *name == "" {
		*name = ""
		return nil, "tools/call names no tool"
	}
	args := params["arguments"]
	switch {
	case args == nil || isNull(args):
		return []byte("{}"), ""
	case args[0] != '{':
		return nil, "the arguments are not an object"
	}
	return args, ""
}

// callInput is what a call may carry beside its arguments, from _meta or
// from the HTTP headers garm's own route reads.
type callInput struct {
	grant, approval, timeoutMs, correlationID, traceparent, tracestate string
}

// readCall reads each of a call's extras from _meta or from its header,
// and its requestState; a fault for the row when one cannot be read. One
// given in both places is refused, even with the same value: garmd reads
// every security-relevant value once. This is the one place MCP reads the
// HTTP headers of a call.
//
// headers is h as toolplane.ReadHeaders read it at the gate: a repeated
// traceparent dropped, tracestate fields combined (decision 0032).
func readCall(h http.Header, headers *chain.Request, req *rpcRequest) (in callInput, state, fault string) {
	for _, f := range []struct {
		key, header string
		number      bool
		fromHeader  string
		into        *string
	}{
		{metaGrant, toolplane.GrantHeader, false, headers.Grant, &in.grant},
		{metaApproval, toolplane.ApprovalHeader, false, headers.Approval, &in.approval},
		{metaTimeoutMs, toolplane.TimeoutHeader, true, headers.TimeoutMs, &in.timeoutMs},
		{metaCorrelationID, toolplane.CorrelationIDHeader, false, headers.CorrelationID, &in.correlationID},
		{metaTraceparent, "Traceparent", false, headers.Traceparent, &in.traceparent},
		{metaTracestate, "Tracestate", false, headers.Tracestate, &in.tracestate},
	} {
		raw, inMeta := req.meta[f.key]
		if inMeta && len(h.Values(f.header)) > 0 {
			return callInput{}, "", "_meta " + f.key + " and the " + f.header + " header are both given"
		}
		if !inMeta {
			*f.into = f.fromHeader
			continue
		}
		v, ok := metaText(raw, f.number)
		if !ok {
			return callInput{}, "", "_meta " + f.key + " is not of its type"
		}
		*f.into = v
	}
	if in.grant != "" && in.approval != "" {
		return callInput{}, "", "a grant and an approval id are both given"
	}
	if raw, ok := req.params["requestState"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &state) != nil {
			return callInput{}, "", "requestState is not a string"
		}
		if in.grant != "" || in.approval != "" {
			return callInput{}, "", "requestState is given with a grant or an approval id"
		}
	}
	return in, state, ""
}

// metaText is a _meta value as text: a string, or, when number is set, a
// JSON integer too.
func metaText(raw json.RawMessage, number bool) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	if number {
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			if _, err := n.Int64(); err == nil {
				return n.String(), true
			}
		}
	}
	return "", false
}
