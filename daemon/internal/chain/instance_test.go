package chain_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// lastRow is the one row the rig recorded since the last reset.
func (r *bankRig) lastRow(tb testing.TB) *ledgerv1.Event {
	tb.Helper()
	rows := r.recorder.Rows()
	if len(rows) != 1 {
		tb.Fatalf("%d rows, want 1", len(rows))
	}
	r.recorder.Reset()
	return rows[0]
}

func TestARequireRuleRefusesBeforeTheToolIsAskedNamingTheRule(t *testing.T) {
	r := newBankRig(t)
	r.answers(t, instancetest.GetCustomer, `{"customerId":"C-1002","name":"Bo"}`)
	for _, id := range []string{"C-1002", "C-9999"} { // someone else's, nobody's
		resp := r.call(t, alice, instancetest.GetCustomer, `{"customerId":"`+id+`","tenant":"acme"}`)
		if resp.Status != http.StatusForbidden ||
			string(resp.Body) != `{"code":"permission_denied","message":"The caller may not make this request.","rule":"own_customer"}` {
			t.Fatalf("%s: %d %s", id, resp.Status, resp.Body)
		}
		row := r.lastRow(t)
		if row.GetOutcome() != "denied" || row.GetInstanceRule() != "own_customer" {
			t.Fatalf("%s: row %v", id, row)
		}
	}
	if r.called.Load() != 0 {
		t.Fatal("the tool was asked about a record the caller may not name")
	}
	if resp := r.call(t, alice, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"acme"}`); resp.Status != http.StatusOK {
		t.Fatalf("own customer: %d %s", resp.Status, resp.Body)
	}
	if resp := r.call(t, banker, instancetest.GetCustomer, `{"customerId":"C-1002","tenant":"acme"}`); resp.Status != http.StatusOK {
		t.Fatalf("staff: %d %s", resp.Status, resp.Body)
	}
}

func TestARequireRefusalSpendsNoGrantAndOpensNoApproval(t *testing.T) {
	r := newBankRig(t)
	r.answers(t, instancetest.Pay, `{"paymentId":"P-1","accountId":"A-1","amount":"200000"}`)
	const overCap = `{"accountId":"A-1","amount":"200000"}`
	// Without a grant: refused by the rule, not asked for a grant.
	resp := r.call(t, concierge, instancetest.Pay, overCap)
	if resp.Status != http.StatusForbidden || !strings.Contains(string(resp.Body), `"rule":"agent_cap"`) || resp.Approval != nil {
		t.Fatalf("%d %s %+v", resp.Status, resp.Body, resp.Approval)
	}
	if r.lastRow(t).GetInstanceRule() != "agent_cap" || r.asked.asks.Load() != 0 {
		t.Fatalf("an approval request was opened (%d) for a call a rule refuses", r.asked.asks.Load())
	}
	// With a good grant for exactly this call: the grant does not bypass
	// the rule, and is not spent.
	req := &chain.Request{HTTPMethod: "POST", Path: instancetest.Pay, Authorization: "Bearer " + r.token(t, concierge),
		JSON: true, Body: []byte(overCap), Grant: r.grant(t, "user:alice", overCap)}
	resp = r.chain.Run(t.Context(), req)
	if resp.Status != http.StatusForbidden || !strings.Contains(string(resp.Body), `"rule":"agent_cap"`) {
		t.Fatalf("with a grant: %d %s", resp.Status, resp.Body)
	}
	r.lastRow(t)
	if r.called.Load() != 0 || r.asked.asks.Load() != 0 {
		t.Fatal("the call went further than step 4")
	}
	// The same grant, on a call the rules allow, is then good and spent:
	// the refusal did not spend it.
	const underCap = `{"accountId":"A-1","amount":"90000"}`
	req = &chain.Request{HTTPMethod: "POST", Path: instancetest.Pay, Authorization: "Bearer " + r.token(t, concierge),
		JSON: true, Body: []byte(underCap), Grant: r.grant(t, "user:alice", underCap)}
	if resp = r.chain.Run(t.Context(), req); resp.Status != http.StatusOK {
		t.Fatalf("a good grant on an allowed call: %d %s (%v)", resp.Status, resp.Body, r.lastRow(t))
	}
}

func TestAWithheldRecordAnswersExactlyAsTheToolsOwnNotFound(t *testing.T) {
	r := newBankRig(t)
	const body = `{"paymentId":"P-7"}`
	r.refuses("404")
	missing := r.call(t, alice, instancetest.GetPayment, body)
	missingRow := r.lastRow(t)
	r.answers(t, instancetest.GetPayment, `{"paymentId":"P-7","accountId":"A-9","amount":"5"}`)
	withheld := r.call(t, alice, instancetest.GetPayment, body)
	withheldRow := r.lastRow(t)
	r.answers(t, instancetest.GetPayment, `{}`)
	empty := r.call(t, alice, instancetest.GetPayment, body)
	emptyRow := r.lastRow(t)
	for name, got := range map[string]*chain.Response{"another's payment": withheld, "an empty answer": empty} {
		if got.Status != missing.Status || !bytes.Equal(got.Body, missing.Body) || got.ContentType != missing.ContentType ||
			got.Challenge != missing.Challenge || got.RetryAfter != missing.RetryAfter || got.Digest != missing.Digest || got.Approval != nil ||
			got.Code != missing.Code {
			t.Errorf("%s answered %d %s, a missing one %d %s", name, got.Status, got.Body, missing.Status, missing.Body)
		}
	}
	if missing.Status != http.StatusNotFound || !strings.Contains(string(missing.Body), `"tool_code":"404"`) {
		t.Fatalf("the tool's own not-found is %d %s", missing.Status, missing.Body)
	}
	for _, row := range []*ledgerv1.Event{withheldRow, emptyRow} {
		if row.GetOutcome() != missingRow.GetOutcome() || row.GetErrorKind() != missingRow.GetErrorKind() || row.GetInstanceRule() != "own_payment" {
			t.Errorf("withheld row %v, missing row %v", row, missingRow)
		}
	}
	// The audit stream's outcome row names the rule as the ledger's does.
	var audited []string
	for _, row := range r.audit.Rows() {
		if row.GetOutcome() != "intent" {
			audited = append(audited, row.GetInstanceRule())
		}
	}
	if !slices.Equal(audited, []string{"", "own_payment", "own_payment"}) {
		t.Errorf("the audit outcome rows name rules %q", audited)
	}
	r.answers(t, instancetest.GetPayment, `{"paymentId":"P-7","accountId":"A-2","amount":"5"}`)
	if own := r.call(t, alice, instancetest.GetPayment, body); own.Status != http.StatusOK || !strings.Contains(string(own.Body), `"A-2"`) {
		t.Fatalf("own payment: %d %s", own.Status, own.Body)
	}
}

func TestFilteredRowsLeaveNoTraceOnTheWire(t *testing.T) {
	r := newBankRig(t)
	r.answers(t, instancetest.ListAccounts, `{"accounts":[{"accountId":"A-2","owner":"alice","balance":"2"},{"accountId":"A-7","owner":"bo","balance":"7"},`+
		`{"accountId":"A-1","owner":"alice","balance":"1"}],"total":3,"nextPageToken":"p2","summary":{"accounts":[{"accountId":"A-7"}],"count":1}}`)
	resp := r.call(t, alice, instancetest.ListAccounts, `{"customerId":"C-1001"}`)
	if resp.Status != http.StatusOK {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	var page struct {
		Accounts []struct {
			AccountID string `json:"account_id"`
		} `json:"accounts"`
		Total         *int            `json:"total"`
		NextPageToken *string         `json:"next_page_token"`
		Summary       json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(resp.Body, &page); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range page.Accounts {
		ids = append(ids, a.AccountID)
	}
	if !slices.Equal(ids, []string{"A-2", "A-1"}) || page.Total != nil || page.NextPageToken != nil || string(page.Summary) != `{}` {
		t.Fatalf("the page is %s", resp.Body)
	}
	for _, leak := range []string{"A-7", "bo", `"3"`, "p2"} {
		if strings.Contains(string(resp.Body), leak) {
			t.Errorf("the page carries %s: %s", leak, resp.Body)
		}
	}
	row := r.lastRow(t)
	if row.GetRowsFiltered() != 2 || !slices.Equal(row.GetFiltersApplied(), []string{"own_accounts", "own_summary"}) || row.GetInstanceRule() != "" {
		t.Fatalf("row %v", row)
	}
	// Staff keep every row and every count.
	resp = r.call(t, banker, instancetest.ListAccounts, `{"customerId":"C-1001"}`)
	if !strings.Contains(string(resp.Body), "A-7") || !strings.Contains(string(resp.Body), `"total":3`) {
		t.Fatalf("staff: %s", resp.Body)
	}
	if row := r.lastRow(t); row.GetRowsFiltered() != 0 || row.GetFiltersApplied() != nil {
		t.Fatalf("staff row %v", row)
	}
}

func TestTheLedgerNamesTheRuleAndNeverAValue(t *testing.T) {
	r := newBankRig(t)
	const requestCanary, attrCanary = "REQ-CANARY-1", "ATTR-CANARY-2"
	caller := customer(map[string]any{"customer_id": attrCanary, "accounts": []string{attrCanary}})
	r.answers(t, instancetest.GetPayment, `{"paymentId":"`+requestCanary+`","accountId":"`+requestCanary+`"}`)
	calls := []struct{ route, body string }{
		{instancetest.GetCustomer, `{"customerId":"` + requestCanary + `","tenant":"acme"}`},
		{instancetest.GetCustomer, `{"customerId":"` + attrCanary + `","tenant":"` + requestCanary + `"}`},
		{instancetest.Pay, `{"accountId":"` + requestCanary + `","amount":"1"}`},
		{instancetest.GetPayment, `{"paymentId":"` + requestCanary + `"}`},
	}
	for _, c := range calls {
		resp := r.call(t, caller, c.route, c.body)
		row := r.lastRow(t)
		if row.GetInstanceRule() == "" {
			t.Fatalf("%s: no rule named on %v (%d %s)", c.route, row, resp.Status, resp.Body)
		}
		text := protojson.Format(row) + string(resp.Body)
		for _, leak := range []string{requestCanary, attrCanary, "principal.", "request.customer", "request.account", "response.account", "in principal"} {
			if strings.Contains(text, leak) {
				t.Errorf("%s: %q reached the row or the wire: %s", c.route, leak, text)
			}
		}
	}
}

func TestAnAuditOnlyRuleIsRecordedAndTheCallProceeds(t *testing.T) {
	r := newBankRig(t)
	r.answers(t, instancetest.Pay, `{"paymentId":"P-1"}`)
	const body = `{"accountId":"A-1","amount":"600000"}`
	req := &chain.Request{HTTPMethod: "POST", Path: instancetest.Pay, Authorization: "Bearer " + r.token(t, alice),
		JSON: true, Body: []byte(body), Grant: r.grant(t, "user:alice", body)}
	if resp := r.chain.Run(t.Context(), req); resp.Status != http.StatusOK {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if row := r.lastRow(t); !slices.Equal(row.GetAuditOnlyVerdicts(), []string{"require:large_payment"}) || row.GetInstanceRule() != "" {
		t.Fatalf("row %v", row)
	}
}

func TestAnAbsentEmptyWronglyTypedOrOverLongAttributeRefuses(t *testing.T) {
	r := newBankRig(t)
	r.answers(t, instancetest.GetCustomer, `{"customerId":"C-1001"}`)
	const body = `{"customerId":"C-1001","tenant":"acme"}`
	for name, attrs := range map[string]map[string]any{
		"absent":        {},
		"empty":         {"customer_id": ""},
		"wrongly typed": {"customer_id": 1001},
		"a list":        {"customer_id": []string{"C-1001"}},
		"over-long":     {"customer_id": "C-1001" + strings.Repeat("x", 11)},
	} {
		resp := r.call(t, customer(attrs), instancetest.GetCustomer, body)
		row := r.lastRow(t)
		if resp.Status != http.StatusForbidden || row.GetInstanceRule() != "own_customer" || row.GetRuleErrorClass() != "absent_attribute" {
			t.Errorf("%s: %d %s, row rule %q class %q", name, resp.Status, resp.Body, row.GetInstanceRule(), row.GetRuleErrorClass())
		}
	}
	if resp := r.call(t, customer(map[string]any{"customer_id": "C-1001"}), instancetest.GetCustomer, body); resp.Status != http.StatusOK {
		t.Fatalf("a well-typed attribute: %d %s", resp.Status, resp.Body)
	}
}
