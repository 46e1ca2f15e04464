package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
)

// unroutablePrefix makes the path of a call naming no served tool: no route
// starts with it, so the chain answers it as it answers a missing route.
const unroutablePrefix = "mcp:"

// callTool answers tools/call by running the chain in process: the
// arguments are the request body, the result is the chain's answer mapped
// by one table (mapping.go).
func (s *Server) callTool(w http.ResponseWriter, r *http.Request, headers *chain.Request, start time.Time, gen *catalogue.Generation, p *call.Principal, req *rpcRequest, e era) {
	if req.params == nil {
		writeError(w, req.id, errInvalidParams)
		return
	}
	m, err := members(req.params)
	if err != nil {
		writeError(w, req.id, errInvalidParams)
		return
	}
	var name string
	if raw, ok := m["name"]; !ok || json.Unmarshal(raw, &name) != nil || name == "" {
		writeError(w, req.id, errInvalidParams)
		return
	}
	args := m["arguments"]
	switch {
	case args == nil || string(args) == "null":
		args = []byte("{}")
	case args[0] != '{':
		writeError(w, req.id, errInvalidParams)
		return
	}
	var meta map[string]json.RawMessage
	if raw, ok := m["_meta"]; ok && string(raw) != "null" {
		if raw[0] != '{' {
			writeError(w, req.id, errInvalidParams)
			return
		}
		if meta, err = members(raw); err != nil {
			writeError(w, req.id, errInvalidParams)
			return
		}
	}
	in, err := readCall(r.Header, headers, meta)
	if err == nil && in.grant != "" && in.approval != "" {
		err = metaError("a grant and an approval id are both given")
	}
	var state string
	if raw, ok := m["requestState"]; err == nil && ok && string(raw) != "null" {
		if json.Unmarshal(raw, &state) != nil {
			err = metaError("requestState is not a string")
		} else if in.grant != "" || in.approval != "" {
			err = metaError("requestState is given with a grant or an approval id")
		}
	}
	if err != nil {
		s.recordRefusal(start, gen, p, e.clientName, deny.Deny(deny.InvalidArgument, err.Error()))
		writeError(w, req.id, errInvalidParams)
		return
	}
	var approvalDigest string
	if state != "" {
		claims, err := s.openState(state, p, name, time.Now())
		if err != nil {
			s.refuseState(w, req.id, start, gen, p, e, err.Error())
			return
		}
		in.approval, approvalDigest = claims.ID, claims.Digest
	}

	path := unroutablePrefix + name
	if t := toolByFQN(gen, name); t != nil {
		path = t.Method
	}
	// A client that goes away does not cancel a dispatched call (SPEC
	// 7.11): its effect would be unknowable.
	resp := s.chain.Run(context.WithoutCancel(r.Context()), &chain.Request{
		HTTPMethod:     http.MethodPost,
		Path:           path,
		Authorization:  r.Header.Get("Authorization"),
		JSON:           true,
		Body:           args,
		TimeoutMs:      in.timeoutMs,
		Traceparent:    in.traceparent,
		Tracestate:     in.tracestate,
		CorrelationID:  in.correlationID,
		Grant:          in.grant,
		Approval:       in.approval,
		ApprovalDigest: approvalDigest,
		Surface:        chain.SurfaceMCP,
		ClientName:     e.clientName,
	})
	if resp.EventID != "" {
		w.Header()[toolplane.EventIDHeader] = []string{resp.EventID}
	}
	if resp.Digest != "" {
		w.Header()[toolplane.DigestHeader] = []string{resp.Digest}
	}
	if s.askHuman(w, req.id, p, resp, e, meta) {
		return
	}
	result, rerr := s.result(resp, e)
	if rerr != nil {
		if rerr == errUnauthenticated {
			w.Header().Set("Www-Authenticate", s.challenge)
		}
		writeError(w, req.id, rerr)
		return
	}
	writeResult(w, req.id, result)
}

// callInput is what a call may carry beside its arguments, from _meta or
// from the HTTP headers garm's own route reads.
type callInput struct {
	grant, approval, timeoutMs, correlationID, traceparent, tracestate string
}

// readCall reads each of a call's extras from _meta or from its header. One
// given in both places is refused, even with the same value: garmd reads
// every security-relevant value once. This is the one place MCP reads the
// HTTP headers of a call.
//
// headers is h as toolplane.ReadHeaders read it at the gate: a repeated
// traceparent dropped, tracestate fields combined (decision 0032).
func readCall(h http.Header, headers *chain.Request, meta map[string]json.RawMessage) (callInput, error) {
	var in callInput
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
		raw, inMeta := meta[f.key]
		if inMeta && len(h.Values(f.header)) > 0 {
			return callInput{}, errBoth(f.key, f.header)
		}
		if !inMeta {
			*f.into = f.fromHeader
			continue
		}
		v, ok := metaText(raw, f.number)
		if !ok {
			return callInput{}, errMetaType(f.key)
		}
		*f.into = v
	}
	return in, nil
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

type metaError string

func (e metaError) Error() string { return string(e) }

func errBoth(key, header string) error {
	return metaError("_meta " + key + " and the " + header + " header are both given")
}

func errMetaType(key string) error {
	return metaError("_meta " + key + " is not of its type")
}
