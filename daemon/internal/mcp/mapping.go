package mcp

import (
	"encoding/json"
	"net/http"

	"github.com/garm-dev/garm/daemon/internal/chain"
)

// callResult is a tools/call result as garmd writes it. It is written here,
// outside the SDK's own call path, so it sets what that path would:
// resultType on a 2026-07-28 result.
type callResult struct {
	Content           []textContent   `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError,omitempty"`
	ResultType        string          `json:"resultType,omitempty"`
	Meta              map[string]any  `json:"_meta"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

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
	meta := map[string]any{metaEventID: resp.EventID, metaCatalogueDigest: resp.Digest}
	res := callResult{
		Content:           []textContent{{Type: "text", Text: string(resp.Body)}},
		StructuredContent: resp.Body,
		IsError:           resp.Status != http.StatusOK,
		Meta:              meta,
	}
	if e.stateless {
		res.ResultType = "complete"
		meta[metaServerInfo] = s.serverInfo
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, errInternal
	}
	return b, nil
}
