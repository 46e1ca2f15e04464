package mcp

import (
	"net/http"

	"github.com/garm-dev/garm/daemon/internal/chain"
)

// result maps the chain's answer to MCP, by one table:
//
//	200                          the redacted answer as structuredContent, the same JSON as one text block
//	404 (unknown or invisible)   one JSON-RPC error for both, byte for byte: no existence oracle
//	401                          the 401 of the endpoint (a token that lapsed between gate and chain)
//	500                          a JSON-RPC internal error
//	any other refusal            isError, garmd's static body as structuredContent and as text
//
// Every result carries the event id and catalogue digest in _meta.
func (s *Server) result(resp *chain.Response, e era) ([]byte, *rpcError) {
	switch resp.Status {
	case http.StatusNotFound:
		return nil, errUnknownTool
	case http.StatusUnauthorized:
		return nil, errUnauthenticated
	case http.StatusInternalServerError:
		return nil, errInternal
	}
	// Written by hand, outside the SDK's own call path: so it sets what
	// that path would, resultType on a 2026-07-28 result. The body is the
	// chain's compact JSON object, copied as it is.
	out := make([]byte, 0, 2*len(resp.Body)+256)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = appendString(out, string(resp.Body))
	out = append(out, `}],"structuredContent":`...)
	out = append(out, resp.Body...)
	if resp.Status != http.StatusOK {
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
		return out, nil
	}
	return append(out, "}}"...), nil
}
