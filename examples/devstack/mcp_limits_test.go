package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The tour's limit step over MCP: the agent's calls count on the same
// limit as over HTTP, and the call over it is an isError result whose
// structuredContent is the body HTTP answers with 429: rate_limited, the
// limit's id and a positive retry_after_seconds.
func TestAnAgentOverItsLimitGetsTheSameRefusalOverMCP(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	d := bankDemo()
	concierge := c.token(d.customer, d.concierge)
	hdr := []string{"Mcp-Protocol-Version", statelessEra}
	call := func() mcpResult {
		t.Helper()
		a := c.rpc(concierge, rpcBody(t, 1, "tools/call", map[string]any{"name": d.cardsTool, "arguments": d.ownBalanceRequest, "_meta": statelessMeta(nil)}), hdr...)
		var r mcpResult
		if err := json.Unmarshal([]byte(a.body), &r); a.status != http.StatusOK || err != nil {
			t.Fatalf("tools/call %s answered %d %s", d.cardsTool, a.status, a.body)
		}
		return r
	}
	clearOfAMinutesEnd()
	for i := range countOf(t, s, d.cardsTool, d.agentLimit) {
		if r := call(); r.Result.IsError {
			t.Fatalf("list_cards over MCP, call %d: %s", i+1, r.Result.StructuredContent)
		}
	}
	over := call()
	var route string
	for _, tool := range s.Catalogue().Artifact.Tools() {
		if tool.FQN == d.cardsTool {
			route = tool.Method
		}
	}
	overHTTP := c.call(route, concierge, mustJSON(t, d.ownBalanceRequest))
	checkRateLimited(t, "list_cards over HTTP after the agent's limit was met over MCP", overHTTP, d.agentLimit)
	type refusal struct {
		Code, Limit, Message string
		RetryAfterSeconds    int64 `json:"retry_after_seconds"`
	}
	var mcp, web refusal
	if err := json.Unmarshal(over.Result.StructuredContent, &mcp); err != nil || !over.Result.IsError {
		t.Fatalf("list_cards over MCP over the limit: %s (isError %v)", over.Result.StructuredContent, over.Result.IsError)
	}
	_ = json.Unmarshal([]byte(overHTTP.body), &web)
	// The two calls are a moment apart: the seconds to wait may differ by one.
	if mcp.Code != "rate_limited" || mcp.Limit != d.agentLimit || mcp.Message != web.Message ||
		mcp.RetryAfterSeconds <= 0 || mcp.RetryAfterSeconds < web.RetryAfterSeconds || mcp.RetryAfterSeconds > web.RetryAfterSeconds+1 {
		t.Errorf("over MCP the refusal is %+v; over HTTP %+v", mcp, web)
	}
}
