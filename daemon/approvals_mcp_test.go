package garmd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
	garmd "github.com/garm-dev/garm/daemon"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	handshakeEra       = "2025-11-25"
	statelessEra       = "2026-07-28"
	clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// withMCPApprovals serves MCP with approvals on and a requestState key
// made for the test.
func withMCPApprovals(t *testing.T) stackOption {
	path := filepath.Join(t.TempDir(), "approval-state.key")
	writeFile(t, path, []byte("a requestState key of at least thirty-two bytes\n"))
	return func(c *garmd.Config) {
		c.MCP = true
		c.ApprovalStateKeyFile = path
		withApprovals()(c)
	}
}

// paymentArgs is payment as MCP arguments.
func paymentArgs(t *testing.T, amount string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(strings.Replace(payment, `"125000"`, `"`+amount+`"`, 1)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// mcpCall posts one tools/call for appr.v1.pay at era with extra params
// members, and decodes the JSON-RPC answer.
func (s *stack) mcpCall(t *testing.T, token, era string, args map[string]any, meta map[string]any, extra map[string]any) (rpcResult, *answer) {
	t.Helper()
	if meta == nil {
		meta = map[string]any{}
	}
	params := map[string]any{"name": "appr.v1.pay", "arguments": args}
	if era == statelessEra {
		meta["io.modelcontextprotocol/protocolVersion"] = statelessEra
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "approvals-test", "version": "1"}
		if _, ok := meta[clientCapabilities]; !ok {
			meta[clientCapabilities] = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
		}
	}
	params["_meta"] = meta
	for k, v := range extra {
		params[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if era == statelessEra {
		req.Header.Set("Mcp-Protocol-Version", statelessEra)
	}
	ans := s.do(req)
	var r rpcResult
	if err := json.Unmarshal(ans.body, &r); err != nil {
		t.Fatalf("not a JSON-RPC answer: %d %s", ans.status, ans.body)
	}
	return r, ans
}

type rpcResult struct {
	Result *struct {
		ResultType    string          `json:"resultType"`
		IsError       bool            `json:"isError"`
		RequestState  string          `json:"requestState"`
		Structured    json.RawMessage `json:"structuredContent"`
		Content       []struct{ Text string }
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode          string `json:"mode"`
				URL           string `json:"url"`
				ElicitationID string `json:"elicitationId"`
			} `json:"params"`
		} `json:"inputRequests"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
		Data struct {
			Elicitations []struct {
				Mode          string `json:"mode"`
				URL           string `json:"url"`
				ElicitationID string `json:"elicitationId"`
			} `json:"elicitations"`
		} `json:"data"`
	} `json:"error"`
}

// elicited is the approval id and URL of an input_required answer.
func elicited(t *testing.T, r rpcResult, raw *answer) (id, state string) {
	t.Helper()
	if r.Result == nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("not input_required: %s", raw.body)
	}
	in, ok := r.Result.InputRequests["garm_approval"]
	if !ok || in.Method != "elicitation/create" || in.Params.Mode != "url" || !pending.ValidID(in.Params.ElicitationID) ||
		in.Params.URL != approvalsURL+"/requests/"+in.Params.ElicitationID {
		t.Fatalf("the input request: %s", raw.body)
	}
	return in.Params.ElicitationID, r.Result.RequestState
}

func TestAnMCPClientIsSentToTheInboxAndItsRetryPaysOnce(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withMCPApprovals(t))
	var asked atomic.Int32
	client := sdk.NewClient(&sdk.Implementation{Name: "approvals-test", Version: "1"}, &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked.Add(1)
			p := req.Params
			if p.Mode != "url" || p.URL != approvalsURL+"/requests/"+p.ElicitationID {
				t.Errorf("elicited %+v", p)
				return &sdk.ElicitResult{Action: "decline"}, nil
			}
			// The human approves in the inbox while the client waits.
			s.decide(p.ElicitationID, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             s.url + "/mcp",
		HTTPClient:           &http.Client{Transport: bearerTransport{token: s.token("payer")}, Timeout: waitTimeout},
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: statelessEra})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "appr.v1.pay", Arguments: paymentArgs(t, "125000")})
	if err != nil || res.IsError {
		t.Fatalf("the call through the inbox: %v %+v", err, res)
	}
	if asked.Load() != 1 || s.payments.paid.Load() != 1 {
		t.Fatalf("elicited %d times, paid %d times", asked.Load(), s.payments.paid.Load())
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestARequestStateIsRefusedTamperedReplayedOrInAnotherCallersHands(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withMCPApprovals(t))
	payerToken := s.token("payer")
	r, raw := s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), nil, nil)
	id, state := elicited(t, r, raw)
	if row := s.row(raw.header.Get("Garm-Event-Id")); row.GetOutcome() != "denied" || row.GetTags()["approval_id"] != id {
		t.Errorf("the row of the first call: %v %v", row.GetOutcome(), row.GetTags())
	}

	refusedAlike := func(name string, r rpcResult, raw *answer) {
		t.Helper()
		if r.Result == nil || !r.Result.IsError || string(r.Result.Structured) != approvalRefusedBody {
			t.Errorf("%s: %s", name, raw.body)
		}
		if ev := raw.header.Get("Garm-Event-Id"); ev == "" || s.row(ev).GetOutcome() != "denied" {
			t.Errorf("%s: no denied row", name)
		}
	}
	body, sig, _ := strings.Cut(state, ".")
	tampered := []string{
		body + "." + strings.Repeat("A", len(sig)),
		strings.Replace(body, body[len(body)/2:len(body)/2+1], flip(body[len(body)/2]), 1) + "." + sig,
		"not a state",
	}
	for i, bad := range tampered {
		r, raw := s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), nil, map[string]any{"requestState": bad})
		refusedAlike("tampered state "+string(rune('a'+i)), r, raw)
	}
	for _, other := range []string{"clerk", "payments-assistant>payer"} {
		r, raw := s.mcpCall(t, s.token(other), statelessEra, paymentArgs(t, "125000"), nil, map[string]any{"requestState": state})
		refusedAlike("the state in "+other+"'s hands", r, raw)
	}

	// Still pending: asked again, with the same request.
	r, raw = s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), nil, map[string]any{"requestState": state})
	if again, _ := elicited(t, r, raw); again != id {
		t.Fatalf("a retry before the decision made request %s, not %s", again, id)
	}

	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	r, raw = s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "9125000"), nil, map[string]any{"requestState": state})
	if r.Result == nil || !r.Result.IsError || string(r.Result.Structured) != permissionDeniedBody {
		t.Fatalf("the retry with other material: %s", raw.body)
	}
	r, raw = s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), nil, map[string]any{"requestState": state})
	if r.Result == nil || r.Result.IsError || r.Result.ResultType != "complete" {
		t.Fatalf("the retry once approved: %s", raw.body)
	}
	r, raw = s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), nil, map[string]any{"requestState": state})
	if r.Result == nil || !r.Result.IsError || string(r.Result.Structured) != permissionDeniedBody {
		t.Fatalf("the state replayed after spending: %s", raw.body)
	}
	if d := s.row(raw.header.Get("Garm-Event-Id")).GetErrorDetail(); !strings.Contains(d, "already spent") {
		t.Errorf("the replay's row says %q", d)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
	// A state beside a grant or an approval id has two readers: refused.
	r, raw = s.mcpCall(t, payerToken, statelessEra, paymentArgs(t, "125000"), map[string]any{"dev.garm/approval": id}, map[string]any{"requestState": state})
	if r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("a requestState beside an approval id: %s", raw.body)
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestAClientThatDeclaresNoURLElicitationGetsTheIsErrorResultNamingThePage(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withMCPApprovals(t))
	formOnly := map[string]any{clientCapabilities: map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}
	r, raw := s.mcpCall(t, s.token("payer"), statelessEra, paymentArgs(t, "125000"), formOnly, nil)
	var body approvalBody
	if r.Result == nil || !r.Result.IsError || r.Result.ResultType != "complete" || json.Unmarshal(r.Result.Structured, &body) != nil ||
		body.Code != "grant_required" || body.Approval == nil || !strings.Contains(r.Result.Content[0].Text, body.Approval.URL) {
		t.Fatalf("at 2026-07-28 without URL elicitation: %s", raw.body)
	}
}

func TestAHandshakeEraClientGetsAURLElicitationOnlyWhenItDeclaresOne(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withMCPApprovals(t))
	token := s.token("payer")
	declared := map[string]any{clientCapabilities: map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}}
	r, raw := s.mcpCall(t, token, handshakeEra, paymentArgs(t, "125000"), declared, nil)
	if r.Error == nil || r.Error.Code != -32042 || len(r.Error.Data.Elicitations) != 1 {
		t.Fatalf("with URL elicitation declared: %s", raw.body)
	}
	e := r.Error.Data.Elicitations[0]
	if e.Mode != "url" || e.URL != approvalsURL+"/requests/"+e.ElicitationID {
		t.Fatalf("the elicitation: %+v", e)
	}
	r, raw = s.mcpCall(t, token, handshakeEra, paymentArgs(t, "125000"), nil, nil)
	if r.Result == nil || !r.Result.IsError || len(r.Result.Content) != 1 || !strings.Contains(r.Result.Content[0].Text, e.URL) {
		t.Fatalf("without it: %s", raw.body)
	}
	s.decide(e.ElicitationID, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	r, raw = s.mcpCall(t, token, handshakeEra, paymentArgs(t, "125000"), map[string]any{"dev.garm/approval": e.ElicitationID}, nil)
	if r.Result == nil || r.Result.IsError {
		t.Fatalf("the retry with the approval id in _meta: %s", raw.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}
