package garmd_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
)

// A plain retry — the same call by the same caller, presenting no id —
// finds the decision on its request (decision 0113).

func TestAPlainRetryAfterTheApprovalPaysOnceAndTheNextCallAsksAgain(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))

	paid := s.post(payPath, token, payment)
	if paid.status != http.StatusOK {
		t.Fatalf("a plain retry after the approval: %d %s", paid.status, paid.body)
	}
	if tag := s.row(paid.eventID()).GetTags()["approval_id"]; tag != id {
		t.Errorf("the paid call's row names request %q, want %q", tag, id)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
	// The approval was collected: the same call again is a new payment,
	// which needs a new human.
	next := readApproval(t, s.post(payPath, token, payment))
	if next.Code != "grant_required" || next.Approval == nil || next.Approval.ID == id {
		t.Fatalf("the call after the paid retry: %+v", next)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}

func TestAnotherCallersOrAnotherAmountsIdenticalRetryDoesNotPickUpTheDecision(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	id := readApproval(t, s.post(payPath, s.token("payer"), payment)).Approval.ID
	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))

	more := strings.Replace(payment, `"125000"`, `"9125000"`, 1)
	for name, ans := range map[string]*answer{
		"another subject":               s.post(payPath, s.token("clerk"), payment),
		"the payer through an agent":    s.post(payPath, s.token("payments-assistant>payer"), payment),
		"the payer with another amount": s.post(payPath, s.token("payer"), more),
	} {
		b := readApproval(t, ans)
		if ans.status != http.StatusForbidden || b.Code != "grant_required" || b.Approval == nil || b.Approval.ID == id {
			t.Errorf("%s: %d %s, want a request of its own", name, ans.status, ans.body)
		}
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}
	if _, dec, err := s.pendingStore().Get(context.Background(), id); err != nil || dec == nil {
		t.Fatalf("the payer's request: %v %v", dec, err)
	}
	if paid := s.post(payPath, s.token("payer"), payment); paid.status != http.StatusOK {
		t.Fatalf("the payer's own plain retry after the others': %d %s", paid.status, paid.body)
	}
}

func TestABareCallAfterAnApprovalCollectedByIDAsksAnew(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	s.decide(id, pending.Approved, s.grant("approver", "appr.v1.pay", payer, paymentMaterial, ""))
	if paid := s.post(payPath, token, payment, "Garm-Approval", id); paid.status != http.StatusOK {
		t.Fatalf("the retry with the id: %d %s", paid.status, paid.body)
	}
	next := s.post(payPath, token, payment)
	if b := readApproval(t, next); next.status != http.StatusForbidden || b.Code != "grant_required" || b.Approval == nil || b.Approval.ID == id {
		t.Fatalf("the same payment again, bare: %d %s, want a new request", next.status, next.body)
	}
}

// A grant the caller presented itself is spent; a bare retry of the same
// call afterwards recalls a decision whose grant no longer verifies, and
// asks a human anew rather than refusing the call outright.
func TestABareCallAfterTheApprovedGrantWasPresentedAndSpentAsksAnew(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals())
	token := s.token("payer")
	id := readApproval(t, s.post(payPath, token, payment)).Approval.ID
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
	s.decide(id, pending.Approved, g)
	if paid := s.post(payPath, token, payment, "Garm-Grant", g); paid.status != http.StatusOK {
		t.Fatalf("the call presenting the grant: %d %s", paid.status, paid.body)
	}
	next := s.post(payPath, token, payment)
	if b := readApproval(t, next); next.status != http.StatusForbidden || b.Code != "grant_required" || b.Approval == nil || b.Approval.ID == id {
		t.Fatalf("the same payment again, bare: %d %s, want a new request (%s)", next.status, next.body, s.row(next.eventID()).GetErrorDetail())
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times", n)
	}
}
