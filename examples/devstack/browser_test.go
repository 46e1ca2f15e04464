package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/examples/bank"
)

// chromiumPath is Debian's chromium, which .ci/run installs when it is absent.
const chromiumPath = "/usr/bin/chromium"

// browserFor starts a headless Chromium of its own, with a fresh profile, for one person: each
// has its own cookies. It is stopped when the test ends.
func browserFor(t *testing.T) context.Context {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		t.Fatalf("the browser test needs Chromium at %s: install it with: apt-get update && apt-get install -y chromium", chromiumPath)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 1400),
	)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 6*waitTimeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx() // closes the browser this context started
		cancelAlloc()
	})
	return ctx
}

// signInAt opens url in the browser, which the approvals service sends to the dev IdP's picker,
// and picks persona; it answers the URL the browser lands on.
func signInAt(t *testing.T, ctx context.Context, url, persona string) string {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`button[value="`+persona+`"]`)),
		chromedp.Click(chromedp.CSS(`button[value="`+persona+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#approver`)),
	); err != nil {
		t.Fatalf("signing in as %s at %s: %v", persona, url, err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "/callback") {
		// A cross-site sign-in lands on a page with a link to where it was going.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#continue`)), chromedp.WaitVisible(chromedp.CSS(`main`))); err != nil {
			t.Fatal(err)
		}
		loc, _ = chromedp.Run(ctx, chromedp.Location())
	}
	return loc
}

// text is the visible text of the page's main part.
func text(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// agentCall is one MCP tools/call of the payment at 2026-07-28, as the payer agent's client
// sends it: amount in minor units, and the requestState of an earlier answer when retrying.
func agentCall(t *testing.T, c *client, token string, amount int64, requestState string) mcpPaymentAnswer {
	t.Helper()
	d := bankDemo()
	req := d.paymentRequest
	req.AmountMinorUnits = amount
	// The agent's client declares URL elicitation: it can send its person to a page.
	meta := statelessMeta(map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}})
	params := map[string]any{"name": d.paymentTool, "arguments": req, "_meta": meta}
	if requestState != "" {
		params["requestState"] = requestState
	}
	a := c.rpc(token, rpcBody(t, 1, "tools/call", params), "Mcp-Protocol-Version", statelessEra)
	var r mcpPaymentAnswer
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatalf("not a JSON-RPC answer: %d %s", a.status, a.body)
	}
	r.raw = a.body
	return r
}

// mcpPaymentAnswer is what the story reads of a tools/call answer.
type mcpPaymentAnswer struct {
	Result *struct {
		ResultType    string          `json:"resultType"`
		IsError       bool            `json:"isError"`
		RequestState  string          `json:"requestState"`
		Structured    json.RawMessage `json:"structuredContent"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode          string `json:"mode"`
				URL           string `json:"url"`
				ElicitationID string `json:"elicitationId"`
			} `json:"params"`
		} `json:"inputRequests"`
	} `json:"result"`
	raw string
}

// askForPayment is the payer agent's call for a payment of amount, held for a human: it answers
// input_required with a URL-mode elicitation to the request's page and a requestState, and the
// story answers the request's id, its URL and the state.
func askForPayment(t *testing.T, c *client, token string, amount int64) (id, url, state string) {
	t.Helper()
	r := agentCall(t, c, token, amount, "")
	if r.Result == nil || r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		t.Fatalf("the payment without a grant is not input_required: %s", r.raw)
	}
	in, ok := r.Result.InputRequests["garm_approval"]
	if !ok || in.Method != "elicitation/create" || in.Params.Mode != "url" || !pending.ValidID(in.Params.ElicitationID) {
		t.Fatalf("the answer elicits no approval: %s", r.raw)
	}
	return in.Params.ElicitationID, in.Params.URL, r.Result.RequestState
}

// TestAnApproverApprovesAnAgentsPaymentInARealBrowser plays the approval story in headless
// Chromium against the dev stack: the agent is sent to the inbox, a person signs in and
// approves exactly what they see, the agent's retry pays once, a denied payment stays refused,
// and nobody who may not decide a payment is shown it.
func TestAnApproverApprovesAnAgentsPaymentInARealBrowser(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	d := bankDemo()
	var paymentRoute string
	for _, tool := range s.Catalogue().Artifact.Tools() {
		if tool.FQN == d.paymentTool {
			paymentRoute = tool.Method
		}
	}
	payer := c.token(d.treasurer, bank.PayerAgent)

	// 1. The agent's MCP call is held, and told where a person approves it.
	id, url, state := askForPayment(t, c, payer, d.paymentRequest.AmountMinorUnits)
	if url != s.URLs().Approvals+"/requests/"+id {
		t.Fatalf("the approval url is %q", url)
	}

	// 2. The approver opens it, signs in, sees the payment and approves it.
	approver := browserFor(t)
	if loc := signInAt(t, approver, url, d.approver); loc != url {
		t.Fatalf("after signing in the browser is at %s, want %s", loc, url)
	}
	page := text(t, approver)
	for what, want := range map[string]string{
		"the tool": "Send a payment", "the amount": "125000", "the currency": bank.DemoCurrency,
		"the IBAN": bank.DemoBeneficiaryIBAN, "the paying account": bank.DemoAccount,
		"who asks": "user:tess@acme-bank.example", "the agent acting for them": "agent:payments-assistant",
		"the approval notes": "The approver confirms",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the request's page does not show %s (%q):\n%s", what, want, page)
		}
	}
	shot, err := chromedp.Run(approver, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatal(err)
	}
	shotPath := filepath.Join(t.ArtifactDir(), "request-page.jpg")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("the request page's screenshot: %s", shotPath)
	if err := chromedp.Do(approver, chromedp.Click(chromedp.CSS(`#approve`)), chromedp.WaitVisible(chromedp.CSS(`#status`))); err != nil {
		t.Fatal(err)
	}
	if status, _ := chromedp.Run(approver, chromedp.Text(chromedp.CSS(`#status`))); !strings.Contains(status, "approved by user:adam@acme-bank.example") {
		t.Fatalf("after approving the page says %q", status)
	}

	// 3. The agent's retry, carrying the requestState, pays once; 4. a second retry is refused.
	paid := agentCall(t, c, payer, d.paymentRequest.AmountMinorUnits, state)
	if paid.Result == nil || paid.Result.IsError || !strings.Contains(string(paid.Result.Structured), "PAYMENT_STATUS_PENDING") {
		t.Fatalf("the approved retry: %s", paid.raw)
	}
	if again := agentCall(t, c, payer, d.paymentRequest.AmountMinorUnits, state); again.Result == nil || !again.Result.IsError || !strings.Contains(again.raw, "permission_denied") {
		t.Fatalf("a second retry: %s", again.raw)
	}
	// Over HTTP the same request's id is refused too: the grant is spent.
	if again := c.call(paymentRoute, payer, mustJSON(t, d.paymentRequest), "Garm-Approval", id); again.status != http.StatusForbidden {
		t.Fatalf("the spent approval over HTTP: %d %s", again.status, again.body)
	}

	// 5. Another payment, denied in the browser, stays refused on retry.
	_, deniedURL, deniedState := askForPayment(t, c, payer, 990000)
	if err := chromedp.Do(approver, chromedp.Navigate(deniedURL), chromedp.WaitVisible(chromedp.CSS(`#deny`)),
		chromedp.Click(chromedp.CSS(`#deny`)), chromedp.WaitVisible(chromedp.CSS(`#status`))); err != nil {
		t.Fatal(err)
	}
	if status, _ := chromedp.Run(approver, chromedp.Text(chromedp.CSS(`#status`))); !strings.Contains(status, "denied") {
		t.Fatalf("after denying the page says %q", status)
	}
	if retry := agentCall(t, c, payer, 990000, deniedState); retry.Result == nil || !retry.Result.IsError || !strings.Contains(retry.raw, "permission_denied") {
		t.Fatalf("the denied payment's retry: %s", retry.raw)
	}

	// 6. The treasurer cannot approve their own payment, and 7. an approver without the
	// clearance sees nothing: each sees an empty inbox and the request's page as a missing one.
	pendingID, pendingURL, _ := askForPayment(t, c, payer, 4200)
	for _, persona := range []string{d.treasurer, d.support} {
		b := browserFor(t)
		signInAt(t, b, s.URLs().Approvals+"/", persona)
		if inbox := text(t, b); !strings.Contains(inbox, "Nothing is waiting for your decision") || strings.Contains(inbox, "Send a payment") {
			t.Errorf("%s's inbox:\n%s", persona, inbox)
		}
		if err := chromedp.Do(b, chromedp.Navigate(pendingURL), chromedp.WaitVisible(chromedp.CSS(`#message-title`))); err != nil {
			t.Fatal(err)
		}
		if got := text(t, b); !strings.Contains(got, "Not found") || strings.Contains(got, bank.DemoBeneficiaryIBAN) {
			t.Errorf("%s opening the request's page sees:\n%s", persona, got)
		}
	}
	// The approver, for contrast, sees that payment waiting.
	if err := chromedp.Do(approver, chromedp.Navigate(s.URLs().Approvals+"/"), chromedp.WaitVisible(chromedp.CSS(`#inbox`))); err != nil {
		t.Fatal(err)
	}
	if html, _ := chromedp.Run(approver, chromedp.OuterHTML(chromedp.CSS(`#inbox`))); !strings.Contains(html, pendingID) {
		t.Errorf("the approver's inbox does not list the waiting payment:\n%s", html)
	}
}
