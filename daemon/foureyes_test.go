package garmd_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/runtime/wire"
)

// appr.v1.pay declares distinct_approver: four eyes, design 3.1 as amended by
// decision 0035.

const (
	treasurer = "user:tess@acme.example"
	// paymentsAgent acts for payer in "payments-assistant>payer" tokens.
	paymentsAgent = "agent:payments-assistant"
)

func TestAPaymentApprovedByItsOwnCallerIsRefusedAndAnotherApproverOpensIt(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	// The treasurer may both pay and approve; on this tool, not both at once.
	self := s.grant("treasurer", "appr.v1.pay", treasurer, paymentMaterial, "")
	ans := s.post(payPath, s.token("treasurer"), payment, "Garm-Grant", self)
	if ans.status != http.StatusForbidden || string(ans.body) != permissionDeniedBody {
		t.Fatalf("a self-approved payment: %d %s", ans.status, ans.body)
	}
	row := s.row(ans.eventID())
	assertRowOutcome(t, row, "denied", "appr.v1.pay")
	if d := row.GetErrorDetail(); !strings.Contains(d, "the call's own subject") || !strings.Contains(d, "distinct_approver") {
		t.Errorf("error_detail %q does not say the approver is the caller", d)
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}

	other := s.grant("approver", "appr.v1.pay", treasurer, paymentMaterial, "")
	if ans := s.post(payPath, s.token("treasurer"), payment, "Garm-Grant", other); ans.status != http.StatusOK {
		t.Fatalf("the same payment approved by somebody else: %d %s", ans.status, ans.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times, want once", n)
	}
}

func TestAPaymentApprovedByAnActorOfItsChainIsRefused(t *testing.T) {
	t.Parallel()
	// The dev IdP never lets an agent approve, so an approval service of
	// the test's own, with a key generated now, names the agent: a grant
	// issuer that does is what four eyes are there to stop.
	approvals := newApprovalService(t)
	s := startGovernedStack(t, approvals.configure)
	token := s.token("payments-assistant>payer")

	ans := s.post(payPath, token, payment, "Garm-Grant", approvals.grant(t, paymentsAgent, payer, "by-the-agent"))
	if ans.status != http.StatusForbidden || string(ans.body) != permissionDeniedBody {
		t.Fatalf("a payment approved by the agent making it: %d %s", ans.status, ans.body)
	}
	row := s.row(ans.eventID())
	assertRowOutcome(t, row, "denied", "appr.v1.pay")
	if d := row.GetErrorDetail(); !strings.Contains(d, "actor 1 of the call's delegation chain") {
		t.Errorf("error_detail %q does not say the approver is an actor of the chain", d)
	}
	self := s.post(payPath, token, payment, "Garm-Grant", approvals.grant(t, payer, payer, "by-the-subject"))
	if self.status != http.StatusForbidden || !strings.Contains(s.row(self.eventID()).GetErrorDetail(), "the call's own subject") {
		t.Fatalf("a delegated payment approved by its subject: %d %s", self.status, self.body)
	}
	if n := s.payments.paid.Load(); n != 0 {
		t.Fatalf("the tool paid %d times", n)
	}

	ok := s.post(payPath, token, payment, "Garm-Grant", approvals.grant(t, "user:adam@acme.example", payer, "by-somebody-else"))
	if ok.status != http.StatusOK {
		t.Fatalf("the delegated payment approved by a third person: %d %s", ok.status, ok.body)
	}
	if n := s.payments.paid.Load(); n != 1 {
		t.Fatalf("the tool paid %d times, want once", n)
	}
}

// approvalService is a grant issuer apart from the dev IdP: a key made at
// run time, published on a loopback JWKS endpoint.
type approvalService struct {
	key  *keysettest.Key
	jwks *keysettest.Server
}

const (
	approvalsIssuer   = "https://approvals.acme.example"
	approvalsAudience = "garm-grants.acme.example"
)

func newApprovalService(t *testing.T) *approvalService {
	t.Helper()
	key := keysettest.NewKey(t, "ES256", "approvals-1")
	return &approvalService{key: key, jwks: keysettest.NewServer(t, key)}
}

func (a *approvalService) configure(c *garmd.Config) {
	c.GrantIssuer = approvalsIssuer
	c.GrantJWKS = a.jwks.URL
	c.GrantAudience = approvalsAudience
}

// grant is a grant for appr.v1.pay by subject, approved by approver at
// the clearance and compartment the tool asks of an approver.
func (a *approvalService) grant(t *testing.T, approver, subject, jti string) string {
	t.Helper()
	now := time.Now().Unix()
	payload, err := json.Marshal(map[string]any{
		"iss": approvalsIssuer, "aud": approvalsAudience, "jti": jti, "iat": now, "exp": now + 120,
		"garm_grant": map[string]any{
			"tool": "appr.v1.pay", "subject": subject, "approver": approver,
			"approver_clearance": "RESTRICTED", "approver_compartments": []string{"pii-identity"},
			"material": wire.MaterialDigest(paymentMaterial),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a.key.Sign(t, payload)
}
