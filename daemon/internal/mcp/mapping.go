package mcp

import (
	"net/http"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

// The chain's wire codes MCP answers in a shape of its own.
var (
	codeNotFound        = deny.NotFound.String()
	codeUnauthenticated = deny.Unauthenticated.String()
	codeInternal        = deny.Internal.String()
	codeUnavailable     = deny.NoCatalogue.String()
	codeInvalidArgument = deny.InvalidArgument.String()
)

// callError is the one mapping from how the chain ended a tools/call (its
// wire code, chain.Response.Code) to MCP, by code and never by HTTP status:
//
//	"" (the tool answered)   nil: the result, the redacted answer
//	not_found                the JSON-RPC error for an unknown tool, one for
//	                         an invisible tool and a missing one, byte for
//	                         byte: no existence oracle
//	unauthenticated          the endpoint's 401 (a token that lapsed)
//	internal                 a JSON-RPC internal error
//	anything else            nil: an isError result with garmd's static body
//
// A tool's own refusal is tool_refused whatever its tool code, so a tool
// that answers 404 ("no such record") is an isError result, never "Unknown
// tool": only garmd says a tool does not exist. A refusal that must look
// exactly like a tool's own 404 gets that by being tool_refused with tool
// code 404, and nothing here changes.
func callError(code string) *rpcError {
	switch code {
	case codeNotFound:
		return errUnknownTool
	case codeUnauthenticated:
		return errUnauthenticated
	case codeInternal:
		return errInternal
	}
	return nil
}

// result is the CallToolResult of an answer callError maps to none: the
// chain's body (the redacted answer, or garmd's static refusal) as
// structuredContent and as the same JSON in one text block, isError for a
// refusal. Every result carries the event id and catalogue digest in
// _meta.
func (s *Server) result(resp *chain.Response, e era) []byte {
	// Written by hand, outside the SDK's own call path: so it sets what
	// that path would, resultType on a 2026-07-28 result. The body is the
	// chain's compact JSON object, copied as it is.
	out := make([]byte, 0, 2*len(resp.Body)+256)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = appendString(out, string(resp.Body))
	out = append(out, `}],"structuredContent":`...)
	out = append(out, resp.Body...)
	if resp.Code != "" || resp.Status != http.StatusOK {
		out = append(out, `,"isError":true`...)
	}
	out = append(out, `,"_meta":{"`+metaEventID+`":`...)
	out = appendString(out, resp.EventID)
	out = append(out, `,"`+metaCatalogueDigest+`":`...)
	out = appendString(out, resp.Digest)
	if e.stateless {
		out = append(out, `,"`+metaServerInfo+`":`...)
		out = append(out, s.serverInfo...)
		out = append(out, `},"resultType":"complete"}`...)
		return out
	}
	return append(out, "}}"...)
}
