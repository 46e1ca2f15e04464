package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/approvalstest"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/examples/bank"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// The answers the tour pins: what each persona sees of the demo customer,
// and what a payment without, with and again with one grant answers.
const (
	supportSeesCustomer = `{"customer_id":"C-1001","display_name":"Priya Raman","email":"***@example.com","phone":"*********0123","date_of_birth":"1988-01-01T00:00:00Z","customer_since":"2015-03-02T00:00:00Z"}`
	analystSeesCustomer = `{"customer_id":"C-1001","display_name":"Priya Raman","email":"priya.raman@example.com","phone":"+447700900123","date_of_birth":"1988-04-12T00:00:00Z","national_id":"QQ123456C","customer_since":"2015-03-02T00:00:00Z"}`
	notFound            = `{"code":"not_found","message":"No such tool."}`
	grantRequired       = `{"code":"grant_required","distinct_approver":true,"material_fields":["from_account_id","amount_minor_units","currency_code","beneficiary_iban"],"max_grant_age_seconds":300,"message":"This call needs a human's approval grant.","tool":"payments.v1.initiate_payment"}`
	permissionDenied    = `{"code":"permission_denied","message":"The caller may not make this request."}`
)

// What ListTools shows each persona, by FQN.
var listed = map[string][]string{
	bank.SupportPersona: {
		"accounts.v1.get_balance", "accounts.v1.get_customer", "cards.v1.freeze_card", "cards.v1.list_cards",
		"cards.v1.unfreeze_card", "payments.v1.get_payment_status",
	},
	bank.AnalystPersona: {
		"accounts.v1.get_balance", "accounts.v1.get_customer", "calc.v1.add", "calc.v1.divide", "calc.v1.summarize",
		"payments.v1.get_payment_status",
	},
	bank.OutsiderPersona: {"calc.v1.add", "calc.v1.divide", "calc.v1.summarize"},
	bank.TreasurerPersona: {
		"accounts.v1.get_balance", "payments.v1.get_payment_status", "payments.v1.initiate_payment",
	},
	bank.CustomerPersona: {
		"accounts.v1.get_balance", "accounts.v1.get_customer", "cards.v1.list_cards", "payments.v1.get_payment_status",
	},
}

// TestTheTour walks the quick-start's tour over real HTTP against a stack
// started exactly as main starts it (only the addresses differ): redaction
// per persona, an invisible tool answering as a missing route, the listing
// per persona, an agent seeing no more than the user it acts for, and a
// payment that asks for an approval, refuses the caller's own approval and
// the approved grant on another paying account, spends it once and is
// refused the replay; then the instance rules (checkInstanceRules) and an
// agent meeting its limit (checkAgentLimit). The ledger then holds exactly
// one row per call made.
func TestTheTour(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	ledger := readLedger(t, s)
	d := bankDemo()
	routes := map[string]string{}
	for _, tool := range s.Catalogue().Artifact.Tools() {
		routes[tool.FQN] = tool.Method
	}
	customerRoute, paymentRoute := routes[d.customerTool], routes[d.paymentTool]
	customerBody, paymentBody := mustJSON(t, d.customerRequest), mustJSON(t, d.paymentRequest)

	support := c.token(d.support, "")
	analyst := c.token(d.analyst, "")
	outsider := c.token(d.outsider, "")
	treasurer := c.token(d.treasurer, "")
	assistant := c.token(d.support, d.agent)

	// wantRows is the ledger row each call must write, in order.
	type row = tourRow
	var wantRows []row
	expect := func(name string, a answer, status int, body string, r row) {
		t.Helper()
		wantRows = append(wantRows, r)
		if a.status != status || a.body != body {
			t.Errorf("%s: answered %d %s\nwant %d %s", name, a.status, a.body, status, body)
		}
		if a.header.Get("Garm-Event-Id") == "" {
			t.Errorf("%s: the answer carries no Garm-Event-Id", name)
		}
	}

	supportSees := c.call(customerRoute, support, customerBody)
	expect("get_customer as support", supportSees, http.StatusOK, supportSeesCustomer, row{d.customerTool, "ok", ""})
	expect("get_customer as analyst", c.call(customerRoute, analyst, customerBody), http.StatusOK, analystSeesCustomer, row{d.customerTool, "ok", ""})
	invisible := c.call(customerRoute, outsider, customerBody)
	expect("get_customer as outsider", invisible, http.StatusNotFound, notFound, row{d.customerTool, "denied", ""})
	missing := c.call("/accounts.v1.AccountsService/NoSuchMethod", outsider, customerBody)
	expect("a route that does not exist", missing, http.StatusNotFound, notFound, row{"/accounts.v1.AccountsService/NoSuchMethod", "denied", ""})
	for _, h := range []string{"Content-Type", "Content-Length", "Garm-Catalogue-Digest", "Www-Authenticate", "Allow"} {
		if invisible.header.Get(h) != missing.header.Get(h) {
			t.Errorf("%s: an invisible tool answers %q, a missing route %q", h, invisible.header.Get(h), missing.header.Get(h))
		}
	}

	tokens := map[string]string{
		d.support: support, d.analyst: analyst, d.outsider: outsider, d.treasurer: treasurer, d.customer: c.token(d.customer, ""),
	}
	for persona, want := range listed {
		if got := c.listTools(tokens[persona]); !slices.Equal(got, want) {
			t.Errorf("ListTools as %s lists %q, want %q", persona, got, want)
		}
	}

	// The assistant acting for support sees no more than support.
	if got, want := c.listTools(assistant), listed[d.support]; !slices.Equal(got, want) {
		t.Errorf("ListTools as %s for %s lists %q, want %s's %q", d.agent, d.support, got, d.support, want)
	}
	expect("get_customer as the assistant for support", c.call(customerRoute, assistant, customerBody),
		http.StatusOK, supportSees.body, row{d.customerTool, "ok", "agent:support-assistant"})

	// Without a grant, garmd records a request in the approvals inbox and says where it waits.
	asked := c.call(paymentRoute, treasurer, paymentBody)
	wantRows = append(wantRows, row{d.paymentTool, "denied", ""})
	approvalID := grantRequiredWithApproval(t, s, asked)
	// details are the ledger details the refusals below must give, by row.
	details := map[int]string{}
	// The treasurer cannot approve their own payment: to them the request's page is a missing one.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	self, err := approvalstest.SignIn(ctx, s.URLs().Approvals, d.treasurer)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := self.Decide(ctx, approvalID, pending.Approved); err != nil || status != http.StatusNotFound {
		t.Fatalf("the treasurer approving their own payment: %d %v, want 404", status, err)
	}
	approveInInbox(t, s, d.approver, approvalID)
	fromOther := d.paymentRequest
	fromOther.FromAccountID = d.otherAccount
	details[len(wantRows)] = "approves other material"
	expect("initiate_payment from another account than approved", c.call(paymentRoute, treasurer, mustJSON(t, fromOther), "Garm-Approval", approvalID),
		http.StatusForbidden, permissionDenied, row{d.paymentTool, "denied", ""})
	paid := c.call(paymentRoute, treasurer, paymentBody, "Garm-Approval", approvalID)
	wantRows = append(wantRows, row{d.paymentTool, "ok", ""})
	var payment struct {
		Payment struct {
			PaymentID        string `json:"payment_id"`
			Status           string `json:"status"`
			FromAccountID    string `json:"from_account_id"`
			AmountMinorUnits string `json:"amount_minor_units"`
			CurrencyCode     string `json:"currency_code"`
			BeneficiaryIban  string `json:"beneficiary_iban"`
		}
	}
	if err := json.Unmarshal([]byte(paid.body), &payment); paid.status != http.StatusOK || err != nil {
		t.Fatalf("initiate_payment with a grant: answered %d %s (%v)", paid.status, paid.body, err)
	}
	if p := payment.Payment; p.PaymentID == "" || p.Status != "PAYMENT_STATUS_PENDING" || p.FromAccountID != bank.DemoAccount ||
		p.AmountMinorUnits != "125000" || p.CurrencyCode != bank.DemoCurrency || p.BeneficiaryIban != bank.DemoBeneficiaryIBAN {
		t.Errorf("initiate_payment with a grant made %+v", p)
	}
	expect("initiate_payment with the spent grant", c.call(paymentRoute, treasurer, paymentBody, "Garm-Approval", approvalID),
		http.StatusForbidden, permissionDenied, row{d.paymentTool, "denied", ""})

	instanceStart := len(wantRows)
	checkInstanceRules(t, c, d, routes, payment.Payment.PaymentID, expect)
	limitRow := len(wantRows) + countOf(t, s, d.cardsTool, d.agentLimit)
	checkAgentLimit(t, c, s, d, routes, expect)

	// Listing calls that succeed write no row; every other call writes one.
	rows := ledger.exactly(len(wantRows))
	for i, e := range rows {
		if got := (row{e.GetTool(), e.GetOutcome(), e.GetPrincipalActor()}); got != wantRows[i] {
			t.Errorf("ledger row %d is %+v, want %+v", i+1, got, wantRows[i])
		}
		if want, ok := details[i]; ok && !strings.Contains(e.GetErrorDetail(), want) {
			t.Errorf("ledger row %d's error_detail is %q, want it to say %q", i+1, e.GetErrorDetail(), want)
		}
	}
	checkRedactionCounts(t, rows)
	checkRuleColumns(t, rows[instanceStart:instanceStart+len(instanceRows)])
	if e := rows[limitRow]; e.GetLimitId() != d.agentLimit || e.GetLimitKey() != "tenant+subject+agent" {
		t.Errorf("the refusal's row names the limit %q keyed on %q; want %s on tenant+subject+agent", e.GetLimitId(), e.GetLimitKey(), d.agentLimit)
	}
}

// checkAgentLimit walks the tour's limit step: the concierge acting for the
// customer lists his cards as many times as its limit allows, is refused the
// next 429 rate_limited naming the limit with a Retry-After, and the
// customer himself is then still served.
func checkAgentLimit(t *testing.T, c *client, s *Stack, d demo, routes map[string]string,
	expect func(string, answer, int, string, tourRow)) {
	t.Helper()
	concierge := c.token(d.customer, d.concierge)
	route, body := routes[d.cardsTool], mustJSON(t, d.ownBalanceRequest)
	const conciergeSubject = "agent:banking-concierge"
	clearOfAMinutesEnd()
	for i := range countOf(t, s, d.cardsTool, d.agentLimit) {
		a := c.call(route, concierge, body)
		expect(fmt.Sprintf("list_cards as the concierge, call %d", i+1), a, http.StatusOK, a.body, tourRow{d.cardsTool, "ok", conciergeSubject})
	}
	over := c.call(route, concierge, body)
	expect("list_cards as the concierge over its limit", over, http.StatusTooManyRequests, over.body, tourRow{d.cardsTool, "denied", conciergeSubject})
	checkRateLimited(t, "list_cards as the concierge over its limit", over, d.agentLimit)
	self := c.call(route, c.token(d.customer, ""), body)
	expect("list_cards as the customer after his agent's refusal", self, http.StatusOK, self.body, tourRow{d.cardsTool, "ok", ""})
	// The tour run again within the minute: the agent is refused at once.
	again := c.call(route, concierge, body)
	expect("list_cards as the concierge, the tour run again", again, http.StatusTooManyRequests, again.body, tourRow{d.cardsTool, "denied", conciergeSubject})
	checkRateLimited(t, "list_cards as the concierge, the tour run again", again, d.agentLimit)
}

// clearOfAMinutesEnd waits, when a minute ends within the next few
// seconds, for the next to begin, so that calls meant to meet a limit of a
// minute's window are counted in one.
func clearOfAMinutesEnd() {
	const margin = 5 * time.Second
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < margin {
		time.Sleep(left + 100*time.Millisecond)
	}
}

// countOf is the count of the rate limit id of tool in the stack's
// catalogue.
func countOf(t *testing.T, s *Stack, tool, id string) int {
	t.Helper()
	n, ok := rateLimitCount(s.Catalogue(), tool, id)
	if !ok || n == 0 {
		t.Fatalf("the catalogue has no rate limit %s on %s", id, tool)
	}
	return int(n)
}

// checkRateLimited holds a to a 429 rate_limited naming the limit id, with
// the same positive number of seconds in retry_after_seconds, Retry-After
// and RateLimit-Reset, and RateLimit-Limit and RateLimit-Remaining 0.
func checkRateLimited(t *testing.T, name string, a answer, id string) {
	t.Helper()
	var body struct {
		Code              string
		Limit             string
		RetryAfterSeconds int64 `json:"retry_after_seconds"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || a.status != http.StatusTooManyRequests || body.Code != "rate_limited" || body.Limit != id {
		t.Errorf("%s: answered %d %s; want 429 rate_limited naming the limit %s", name, a.status, a.body, id)
		return
	}
	after, err := strconv.ParseInt(a.header.Get("Retry-After"), 10, 64)
	if err != nil || after <= 0 || after != body.RetryAfterSeconds || a.header.Get("RateLimit-Reset") != a.header.Get("Retry-After") {
		t.Errorf("%s: Retry-After %q, RateLimit-Reset %q, retry_after_seconds %d; want one positive number of seconds",
			name, a.header.Get("Retry-After"), a.header.Get("RateLimit-Reset"), body.RetryAfterSeconds)
	}
	if a.header.Get("RateLimit-Limit") == "" || a.header.Get("RateLimit-Remaining") != "0" {
		t.Errorf("%s: RateLimit-Limit %q, RateLimit-Remaining %q", name, a.header.Get("RateLimit-Limit"), a.header.Get("RateLimit-Remaining"))
	}
}

// instanceRows are what the ledger says of checkInstanceRules' five calls,
// in order: the rule that refused or withheld, and the filters that removed
// rows with how many.
var instanceRows = []struct {
	rule     string
	filters  []string
	filtered uint32
}{
	{"", []string{"own_accounts"}, 1},
	{"own_customer", nil, 0},
	{"own_payment", nil, 0},
	{"", nil, 0},
	{"agent_cap", nil, 0},
}

func checkRuleColumns(t *testing.T, rows []*ledgerv1.Event) {
	t.Helper()
	for i, want := range instanceRows {
		e := rows[i]
		if e.GetInstanceRule() != want.rule || !slices.Equal(e.GetFiltersApplied(), want.filters) || e.GetRowsFiltered() != want.filtered {
			t.Errorf("%s's row names the rule %q, filters %q removing %d rows; want %q, %q, %d",
				e.GetTool(), e.GetInstanceRule(), e.GetFiltersApplied(), e.GetRowsFiltered(), want.rule, want.filters, want.filtered)
		}
	}
}

// tourRow is what the tour holds a ledger row to.
type tourRow struct{ tool, outcome, actor string }

// The refusals a require rule answers: the code, and the rule's id as a member.
type ruleRefusal struct {
	Code     string
	Rule     string
	Approval json.RawMessage
}

// checkInstanceRules walks the tour's steps over the contract's instance
// rules: the concierge acting for the customer sees its own account alone,
// is refused another customer naming the rule, gets another customer's
// payment answered byte for byte as a payment that does not exist, and the
// payer acting for the treasurer is refused a payment over the agent cap in
// step 4, before any approval is asked.
func checkInstanceRules(t *testing.T, c *client, d demo, routes map[string]string, tourPayment string,
	expect func(string, answer, int, string, tourRow)) {
	t.Helper()
	if tourPayment != d.tourPayment {
		t.Errorf("the tour's payment is %s; the quick-start says %s", tourPayment, d.tourPayment)
	}
	concierge := c.token(d.customer, d.concierge)
	payer := c.token(d.treasurer, d.payer)
	balanceRoute, statusRoute, paymentRoute := routes[d.balanceTool], routes[d.paymentStatusTool], routes[d.paymentTool]
	const conciergeSubject = "agent:banking-concierge"

	own := c.call(balanceRoute, concierge, mustJSON(t, d.ownBalanceRequest))
	expect("get_balance as the concierge for its customer", own, http.StatusOK, own.body, tourRow{d.balanceTool, "ok", conciergeSubject})
	var balances struct {
		CustomerID string `json:"customer_id"`
		Accounts   []struct {
			AccountID string `json:"account_id"`
		}
	}
	if err := json.Unmarshal([]byte(own.body), &balances); err != nil || balances.CustomerID != d.selfCustomer ||
		len(balances.Accounts) != 1 || balances.Accounts[0].AccountID != d.conciergeAccount {
		t.Errorf("get_balance as the concierge shows %s; want %s's account %s alone", own.body, d.selfCustomer, d.conciergeAccount)
	}

	other := c.call(balanceRoute, concierge, mustJSON(t, d.customerRequest))
	expect("get_balance as the concierge for another customer", other, http.StatusForbidden, other.body, tourRow{d.balanceTool, "denied", conciergeSubject})
	checkRuleRefusal(t, "get_balance for another customer", other, "own_customer")

	withheld := c.call(statusRoute, concierge, mustJSON(t, paymentStatusRequest{PaymentID: tourPayment}))
	missing := c.call(statusRoute, concierge, mustJSON(t, paymentStatusRequest{PaymentID: d.missingPayment}))
	// Withheld or missing, the row is a tool refusal's; only its rule column tells them apart.
	expect("get_payment_status of another customer's payment", withheld, http.StatusNotFound, missing.body, tourRow{d.paymentStatusTool, "error", conciergeSubject})
	expect("get_payment_status of a payment that does not exist", missing, http.StatusNotFound, withheld.body, tourRow{d.paymentStatusTool, "error", conciergeSubject})
	sameAnswer(t, "another customer's payment and a missing one", withheld, missing)

	overCap := c.call(paymentRoute, payer, mustJSON(t, d.overCapPaymentRequest))
	expect("initiate_payment over the agent cap", overCap, http.StatusForbidden, overCap.body, tourRow{d.paymentTool, "denied", "agent:payments-assistant"})
	if r := checkRuleRefusal(t, "initiate_payment over the agent cap", overCap, "agent_cap"); r.Approval != nil {
		t.Errorf("initiate_payment over the agent cap opened an approval request: %s", overCap.body)
	}
}

// checkRuleRefusal holds a to 403 permission_denied naming rule.
func checkRuleRefusal(t *testing.T, name string, a answer, rule string) ruleRefusal {
	t.Helper()
	var r ruleRefusal
	if err := json.Unmarshal([]byte(a.body), &r); err != nil || a.status != http.StatusForbidden || r.Code != "permission_denied" || r.Rule != rule {
		t.Errorf("%s: answered %d %s; want 403 permission_denied naming the rule %s", name, a.status, a.body, rule)
	}
	return r
}

// sameAnswer holds two answers to the same status, body and headers, but
// for each call's own event id.
func sameAnswer(t *testing.T, name string, a, b answer) {
	t.Helper()
	if a.status != b.status || a.body != b.body {
		t.Errorf("%s: %d %s and %d %s differ", name, a.status, a.body, b.status, b.body)
	}
	for h := range a.header {
		if h != "Garm-Event-Id" && h != "Date" && a.header.Get(h) != b.header.Get(h) {
			t.Errorf("%s: header %s is %q and %q", name, h, a.header.Get(h), b.header.Get(h))
		}
	}
	for h := range b.header {
		if _, ok := a.header[h]; !ok {
			t.Errorf("%s: only one answer has the header %s", name, h)
		}
	}
}

// checkRedactionCounts holds the first two rows to what the two personas
// were shown: support had fields withheld, the analyst none.
func checkRedactionCounts(t *testing.T, rows []*ledgerv1.Event) {
	t.Helper()
	if rows[0].GetRedactionCount() == 0 {
		t.Errorf("support's get_customer row counts no redaction: %v", rows[0])
	}
	if rows[1].GetRedactionCount() != 0 {
		t.Errorf("the analyst's get_customer row counts %d redactions", rows[1].GetRedactionCount())
	}
}

// listTools is ListTools over HTTP, as the FQNs it lists.
func (c *client) listTools(token string) []string {
	c.t.Helper()
	a := c.call(listToolsRoute, token, `{}`)
	var listing struct{ Tools []struct{ FQN string } }
	if err := json.Unmarshal([]byte(a.body), &listing); a.status != http.StatusOK || err != nil {
		c.t.Fatalf("ListTools answered %d %s (%v)", a.status, a.body, err)
	}
	fqns := []string{}
	for _, tool := range listing.Tools {
		fqns = append(fqns, tool.FQN)
	}
	return fqns
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// grantRequiredWithApproval checks a grant_required refusal that names its approval request, the
// request's page on the stack's approvals service, and answers the request's id.
func grantRequiredWithApproval(t *testing.T, s *Stack, a answer) string {
	t.Helper()
	var body map[string]any
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || a.status != http.StatusForbidden {
		t.Fatalf("initiate_payment without a grant: answered %d %s", a.status, a.body)
	}
	approval, _ := body["approval"].(map[string]any)
	delete(body, "approval")
	if got := mustJSON(t, body); got != grantRequired {
		t.Errorf("initiate_payment without a grant: answered %s\nwant %s and an approval", got, grantRequired)
	}
	id, _ := approval["id"].(string)
	if !pending.ValidID(id) || approval["url"] != s.URLs().Approvals+"/requests/"+id {
		t.Fatalf("the approval is %v, want an id and its page on %s", approval, s.URLs().Approvals)
	}
	return id
}
