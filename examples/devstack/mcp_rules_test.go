package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// mcpResult is a tools/call result, its _meta apart so that each call's own
// event id can be set aside.
type mcpResult struct {
	Result struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           json.RawMessage `json:"content"`
		Meta              map[string]any  `json:"_meta"`
	} `json:"result"`
}

// withoutEventID is a JSON-RPC answer without the call's own event id, the
// one member two calls' answers may differ in.
func withoutEventID(t *testing.T, body string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	if r, ok := m["result"].(map[string]any); ok {
		if meta, ok := r["_meta"].(map[string]any); ok {
			delete(meta, "dev.garm/event_id")
		}
	}
	return mustJSON(t, m)
}

// The tour's instance-rule steps over MCP: the same decisions as over HTTP.
// Another customer is refused with the rule's id as an isError result; another
// customer's payment is the very result a missing payment gets, but for each
// call's event id; an agent over its cap is refused with no approval asked.
func TestTheInstanceRulesDecideTheSameOverMCP(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	d := bankDemo()
	concierge := c.token(d.customer, d.concierge)
	hdr := []string{"Mcp-Protocol-Version", statelessEra}
	call := func(token, tool string, args any) mcpResult {
		t.Helper()
		a := c.rpc(token, rpcBody(t, 1, "tools/call", map[string]any{"name": tool, "arguments": args, "_meta": statelessMeta(nil)}), hdr...)
		var r mcpResult
		if err := json.Unmarshal([]byte(a.body), &r); a.status != http.StatusOK || err != nil {
			t.Fatalf("tools/call %s answered %d %s", tool, a.status, a.body)
		}
		return r
	}
	refusedWith := func(name string, r mcpResult, rule string) {
		t.Helper()
		var body ruleRefusal
		if err := json.Unmarshal(r.Result.StructuredContent, &body); err != nil || !r.Result.IsError ||
			body.Code != "permission_denied" || body.Rule != rule || body.Approval != nil {
			t.Errorf("%s: %s (isError %v); want permission_denied naming %s and no approval", name, r.Result.StructuredContent, r.Result.IsError, rule)
		}
	}

	own := call(concierge, d.balanceTool, d.ownBalanceRequest)
	var balances struct {
		Accounts []struct {
			AccountID string `json:"account_id"`
		}
	}
	if err := json.Unmarshal(own.Result.StructuredContent, &balances); err != nil || own.Result.IsError ||
		len(balances.Accounts) != 1 || balances.Accounts[0].AccountID != d.conciergeAccount {
		t.Errorf("get_balance as the concierge over MCP shows %s; want %s alone", own.Result.StructuredContent, d.conciergeAccount)
	}
	refusedWith("get_balance for another customer", call(concierge, d.balanceTool, d.customerRequest), "own_customer")

	// A payment from the demo customer's account, made with an approval: another customer's to the concierge.
	routes := map[string]string{}
	for _, tool := range s.Catalogue().Artifact.Tools() {
		routes[tool.FQN] = tool.Method
	}
	treasurer := c.token(d.treasurer, "")
	approval := grantRequiredWithApproval(t, s, c.call(routes[d.paymentTool], treasurer, mustJSON(t, d.paymentRequest)))
	approveInInbox(t, s, d.approver, approval)
	paid := c.call(routes[d.paymentTool], treasurer, mustJSON(t, d.paymentRequest), "Garm-Approval", approval)
	var payment struct {
		Payment struct {
			PaymentID string `json:"payment_id"`
		}
	}
	if err := json.Unmarshal([]byte(paid.body), &payment); paid.status != http.StatusOK || err != nil || payment.Payment.PaymentID == "" {
		t.Fatalf("the approved payment answered %d %s", paid.status, paid.body)
	}
	withheld := c.rpc(concierge, rpcBody(t, 1, "tools/call", map[string]any{
		"name": d.paymentStatusTool, "arguments": paymentStatusRequest{PaymentID: payment.Payment.PaymentID}, "_meta": statelessMeta(nil),
	}), hdr...)
	missing := c.rpc(concierge, rpcBody(t, 1, "tools/call", map[string]any{
		"name": d.paymentStatusTool, "arguments": paymentStatusRequest{PaymentID: d.missingPayment}, "_meta": statelessMeta(nil),
	}), hdr...)
	if w, m := withoutEventID(t, withheld.body), withoutEventID(t, missing.body); withheld.status != missing.status || w != m {
		t.Errorf("another customer's payment and a missing one answer differently over MCP:\n%d %s\n%d %s", withheld.status, w, missing.status, m)
	}
	if strings.Contains(withheld.body, payment.Payment.PaymentID) {
		t.Errorf("another customer's payment was shown over MCP: %s", withheld.body)
	}

	refusedWith("initiate_payment over the agent cap", call(c.token(d.treasurer, d.payer), d.paymentTool, d.overCapPaymentRequest), "agent_cap")
}
