package garmd_test

import (
	"net/http"
	"testing"
)

// Per-caller answers are for the caller alone: no shared cache may keep
// one, and no cache may store it — the listing, where an approval request
// stands, MCP's tools/list, a tool's redacted answer.
func TestEveryPerCallerAnswerIsPrivateAndNotStored(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withMCPApprovals(t))
	payer := s.token("payer")
	asked := s.post(payPath, payer, payment)
	id := readApproval(t, asked).Approval.ID
	answers := map[string]*answer{
		"the listing":            s.post("/garm.v1.ToolCatalogService/ListTools", payer, `{}`),
		"an approval's status":   s.get("/approvals/"+id, payer),
		"a refusal":              asked,
		"a tool's answer":        s.post(getPath, s.token("support"), `{"id":"r1"}`),
		"MCP's tools/list":       s.post("/mcp", payer, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream"),
		"another's status (404)": s.get("/approvals/"+id, s.token("clerk")),
	}
	for name, a := range answers {
		if a.status >= 500 || a.header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("%s: %d, Cache-Control %q: %s", name, a.status, a.header.Get("Cache-Control"), a.body)
		}
	}
	if a := answers["an approval's status"]; a.status != http.StatusOK {
		t.Errorf("the status: %d %s", a.status, a.body)
	}
}
