package garmd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/garm-dev/garm/approvals/pending"
	garmd "github.com/garm-dev/garm/daemon"
)

// approvalsURL is the inbox the tests' garmd sends callers to.
const approvalsURL = "https://approvals.acme.example"

// withApprovals turns approval requests on, over the bucket every test bus
// has (createGovernanceStreams).
func withApprovals() stackOption {
	return func(c *garmd.Config) {
		c.Approvals = true
		c.ApprovalsURL = approvalsURL
	}
}

// approvalBody is the approval member of a grant_required body.
type approvalBody struct {
	Code     string `json:"code"`
	Approval *struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	} `json:"approval"`
}

func readApproval(t *testing.T, ans *answer) approvalBody {
	t.Helper()
	var b approvalBody
	if err := json.Unmarshal(ans.body, &b); err != nil {
		t.Fatalf("%d %s: %v", ans.status, ans.body, err)
	}
	return b
}

// pendingStore is the bucket as the approvals service sees it, on its own
// connection.
func (s *stack) pendingStore() *pending.Store {
	s.t.Helper()
	st, err := pending.Open(context.Background(), s.jetstream())
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

// decide records a decision on id as the approvals service would.
func (s *stack) decide(id string, verdict pending.Verdict, grant string) {
	s.t.Helper()
	err := s.pendingStore().Decide(context.Background(), pending.Decision{ID: id, Verdict: verdict, Approver: "user:adam@acme.example", Grant: grant})
	if err != nil {
		s.t.Fatal(err)
	}
}

// get calls GET path with a bearer token.
func (s *stack) get(path, token string) *answer {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return s.do(req)
}
