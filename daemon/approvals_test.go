package garmd_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
)

const (
	approvalRefusedBody  = `{"code":"permission_denied","message":"No approved request of the caller's has this id: it is missing, was denied or has expired."}`
	approvalNotFoundBody = `{"code":"not_found","message":"No such approval request."}`
	toolUnavailableBody  = `{"code":"unavailable","message":"The tool is not available right now."}`
)

func TestAPaymentWithoutAGrantLeavesOneRequestWhoseApprovalPaysOnce(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	if logs := s.logs.String(); !strings.Contains(logs, "approvals: on, requests in GARM_APPROVALS, decided at "+approvalsURL) {
		t.Errorf("the startup report does not say approvals are on:\n%s", logs)
	}
	token := s.token("payer")
	ans := s.post(payPath, token, payment)
	b := readApproval(t, ans)
	if ans.status != http.StatusForbidden || b.Code != "grant_required" || b.Approval == nil {
		t.Fatalf("a payment without a grant: %d %s", ans.status, ans.body)
	}
	id := b.Approval.ID
	if !pending.ValidID(id) || b.Approval.URL != approvalsURL+"/requests/"+id {
		t.Fatalf("approval %+v", b.Approval)
	}
	row := s.row(ans.eventID())
	assertRowOutcome(t, row, "denied", "appr.v1.pay")
	if row.GetTags()["approval_id"] != id {
		t.Errorf("the row does not name the request: %v", row.GetTags())
	}
	r, d, err := s.pendingStore().Get(context.Background(), id)
	if err != nil || d != nil {
		t.Fatalf("the request: %v %v", err, d)
	}
	if r.Subject != payer || r.Tool != "appr.v1.pay" || r.Tenant != "acme" || r.EventID != ans.eventID() ||
		r.Material["beneficiary_iban"] != "GB29NWBK60161331926819" || !r.DistinctApprover || r.ApproverMinClearance != "CLEARANCE_RESTRICTED" {
		t.Errorf("the request records %+v", r)
	}

	again := readApproval(t, s.post(payPath, token, payment))
	if again.Approval == nil || again.Approval.ID != id {
		t.Fatalf("asking again made another request: %+v", again.Approval)
	}
	if st := s.get("/approvals/"+id, token); st.status != http.StatusOK || string(st.body) != `{"id":"`+id+`","status":"pending"}` {
		t.Fatalf("status while pending: %d %s", st.status, st.body)
	}
	waiting := s.post(payPath, token, payment, "Garm-Approval", id)
	if w := readApproval(t, waiting); waiting.status != http.StatusForbidden || w.Code != "grant_required" || w.Approval == nil || w.Approval.ID != id {
		t.Fatalf("a retry before the decision: %d %s", waiting.status, waiting.body)
	}

	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	st := s.get("/approvals/"+id, token)
	if st.status != http.StatusOK || string(st.body) != `{"id":"`+id+`","status":"approved"}` {
		t.Fatalf("status once approved: %d %s", st.status, st.body)
	}
	paid := s.post(payPath, token, payment, "Garm-Approval", id)
	if paid.status != http.StatusOK {
		t.Fatalf("the retry with the approval: %d %s", paid.status, paid.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
	replay := s.post(payPath, token, payment, "Garm-Approval", id)
	if replay.status != http.StatusForbidden || string(replay.body) != permissionDeniedBody {
		t.Fatalf("a second retry: %d %s", replay.status, replay.body)
	}
	if d := s.row(replay.eventID()).GetErrorDetail(); !strings.Contains(d, "already spent") {
		t.Errorf("the replay's row says %q", d)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times after a replay", n)
	}
}

func TestAnotherCallersApprovalIDAnswersAsAMissingOne(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	id := readApproval(t, s.post(payPath, s.token("payer"), payment)).Approval.ID
	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	missing, _ := pending.NewID()

	for _, caller := range []string{"clerk", "payments-assistant>payer"} {
		theirs := s.post(payPath, s.token(caller), payment, "Garm-Approval", id)
		none := s.post(payPath, s.token(caller), payment, "Garm-Approval", missing)
		if theirs.status != http.StatusForbidden || string(theirs.body) != approvalRefusedBody || string(none.body) != string(theirs.body) {
			t.Errorf("%s with another caller's id: %d %s; with a missing one: %s", caller, theirs.status, theirs.body, none.body)
		}
		if d := s.row(theirs.eventID()).GetErrorDetail(); !strings.Contains(d, "another caller's") {
			t.Errorf("the row says %q", d)
		}
		got, forged := s.get("/approvals/"+id, s.token(caller)), s.get("/approvals/"+missing, s.token(caller))
		if got.status != http.StatusNotFound || string(got.body) != approvalNotFoundBody || string(forged.body) != string(got.body) {
			t.Errorf("%s asking after another caller's request: %d %s", caller, got.status, got.body)
		}
	}
	for _, forged := range []string{"", "..", ">", "*", strings.ToUpper(id), id[:25], id + "a", id[:25] + "*", "req." + id} {
		if forged == "" {
			continue // no header at all: a plain retry, which finds the decision (approvals_retry_test.go)
		}
		ans := s.post(payPath, s.token("payer"), payment, "Garm-Approval", forged)
		if ans.status != http.StatusForbidden || string(ans.body) != approvalRefusedBody {
			t.Errorf("Garm-Approval %q: %d %s", forged, ans.status, ans.body)
		}
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}
	last := s.post(payPath, s.token("payer"), payment, "Garm-Approval", id)
	if last.status != http.StatusOK {
		t.Fatalf("the owner's retry after the others': %d %s", last.status, last.body)
	}
	// Every call and status read wrote its one row, and nothing but the
	// owner's call spent anything.
	s.row(last.eventID())
	if rows, calls := len(s.allLedgerRows()), 1+2*4+8+1; rows != calls {
		t.Errorf("%d ledger rows for %d requests", rows, calls)
	}
	kv, err := s.jetstream().KeyValue(context.Background(), "GARM_GRANTS_SPENT")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	spent := 0
	for range keys.Keys() {
		spent++
	}
	if spent != 1 {
		t.Errorf("%d spent grants, want the owner's one", spent)
	}
}

func TestADeniedRequestIsRefusedOnRetryAndSaysDenied(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	s.decide(id, pending.Denied, "")
	ans := s.post(payPath, token, payment, "Garm-Approval", id)
	if ans.status != http.StatusForbidden || string(ans.body) != approvalRefusedBody {
		t.Fatalf("a retry after a denial: %d %s", ans.status, ans.body)
	}
	if d := s.row(ans.eventID()).GetErrorDetail(); !strings.Contains(d, "denied") {
		t.Errorf("the row says %q", d)
	}
	if st := s.get("/approvals/"+id, token); string(st.body) != `{"id":"`+id+`","status":"denied"}` {
		t.Errorf("status after a denial: %d %s", st.status, st.body)
	}
	// A plain retry finds the denial rather than asking again (decision
	// 0113), until the request expires with its grant age.
	plain := s.post(payPath, token, payment)
	if plain.status != http.StatusForbidden || string(plain.body) != approvalRefusedBody {
		t.Fatalf("a plain retry after a denial: %d %s", plain.status, plain.body)
	}
	if row := s.row(plain.eventID()); row.GetTags()["approval_id"] != id || !strings.Contains(row.GetErrorDetail(), "was denied") {
		t.Errorf("the plain retry's row: %v %q", row.GetTags(), row.GetErrorDetail())
	}
	if open, err := s.pendingStore().Open(context.Background(), 0); err != nil || len(open) != 0 {
		t.Errorf("the plain retry after a denial opened a request: %v %v", open, err)
	}
}

func TestMaterialChangedBetweenAskingAndRetryingIsRefusedAndSpendsNothing(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	more := strings.Replace(payment, `"125000"`, `"9125000"`, 1)
	ans := s.post(payPath, token, more, "Garm-Approval", id)
	if ans.status != http.StatusForbidden || string(ans.body) != permissionDeniedBody {
		t.Fatalf("a retry with another amount: %d %s", ans.status, ans.body)
	}
	if d := s.row(ans.eventID()).GetErrorDetail(); !strings.Contains(d, "other material") {
		t.Errorf("the row says %q", d)
	}
	if ok := s.post(payPath, token, payment, "Garm-Approval", id); ok.status != http.StatusOK {
		t.Fatalf("the refused retry spent the grant: %d %s", ok.status, ok.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestGarmApprovalIsReadOnceAndNeverBesideGarmGrant(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
	s.decide(id, pending.Approved, g)
	for name, set := range map[string]func(*http.Request){
		"twice":            func(r *http.Request) { r.Header.Add("Garm-Approval", id); r.Header.Add("Garm-Approval", id) },
		"folded":           func(r *http.Request) { r.Header.Set("Garm-Approval", id); r.Header["Garm_approval"] = []string{id} },
		"beside its grant": func(r *http.Request) { r.Header.Set("Garm-Approval", id); r.Header.Set("Garm-Grant", g) },
	} {
		req, err := http.NewRequest(http.MethodPost, s.url+payPath, strings.NewReader(payment))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		set(req)
		ans := s.do(req)
		if ans.status != http.StatusBadRequest || !strings.Contains(string(ans.body), "more than once or is malformed") {
			t.Errorf("Garm-Approval %s: %d %s", name, ans.status, ans.body)
		}
		assertRowOutcome(t, s.row(ans.eventID()), "denied", payPath)
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestACallerWhoCannotSeeTheToolGetsNoRequest(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	hidden := s.post(payPath, s.token("approver"), payment)
	missing := s.post("/appr.v1.Payments/Nothing", s.token("approver"), payment)
	if hidden.status != http.StatusNotFound || string(hidden.body) != string(missing.body) || strings.Contains(string(hidden.body), "approval") {
		t.Fatalf("an invisible tool: %d %s; a missing route: %s", hidden.status, hidden.body, missing.body)
	}
	if open, err := s.pendingStore().Open(context.Background(), 0); err != nil || len(open) != 0 {
		t.Fatalf("a request was recorded for a caller who cannot see the tool: %v %v", open, err)
	}
}

func TestARequestThatCannotBeRecordedForWantOfTheBucketIsAMomentary503(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	js := s.jetstream()
	if err := js.DeleteKeyValue(context.Background(), pending.Bucket); err != nil {
		t.Fatal(err)
	}
	ans := s.post(payPath, s.token("payer"), payment)
	if ans.status != http.StatusServiceUnavailable || string(ans.body) != toolUnavailableBody || ans.header.Get("Retry-After") == "" {
		t.Fatalf("with the bucket gone: %d %s (Retry-After %q)", ans.status, ans.body, ans.header.Get("Retry-After"))
	}
	row := s.row(ans.eventID())
	if row.GetErrorKind() != "approvals_unavailable" || !strings.Contains(row.GetErrorDetail(), "no approval request could be found or recorded") {
		t.Errorf("the row says %q: %q", row.GetErrorKind(), row.GetErrorDetail())
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestApprovalsAreOffWithoutTheFlag(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	ans := s.post(payPath, s.token("payer"), payment)
	if ans.status != http.StatusForbidden || string(ans.body) != grantRequiredBody {
		t.Fatalf("without --approvals: %d %s", ans.status, ans.body)
	}
	id, _ := pending.NewID()
	if ans := s.post(payPath, s.token("payer"), payment, "Garm-Approval", id); ans.status != http.StatusForbidden || string(ans.body) != approvalRefusedBody {
		t.Errorf("Garm-Approval without --approvals: %d %s", ans.status, ans.body)
	}
	if ans := s.get("/approvals/"+id, s.token("payer")); ans.status != http.StatusMethodNotAllowed {
		t.Errorf("GET /approvals without --approvals: %d %s", ans.status, ans.body)
	}
}
