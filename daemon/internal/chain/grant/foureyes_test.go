package grant_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestFourEyesRefusesAGrantApprovedByAPartyToTheCall(t *testing.T) {
	fourEyes := func(a *toolv1.ToolPolicy_Approval) { a.DistinctApprover = true }
	// The caller is an agent acting for a person, through a second agent.
	delegated := &call.Principal{
		Subject: caller, Clearance: toolv1.Clearance_CLEARANCE_INTERNAL,
		Act: []call.Actor{{Subject: "agent:planner"}, {Subject: "agent:clerk"}},
	}
	for _, tc := range []struct {
		name     string
		approver string
		distinct bool
		// refused is the part of the ledger detail saying why; "" accepts.
		refused string
	}{
		{"the subject approving its own call", caller, true, "the call's own subject"},
		{"the outermost actor approving", "agent:planner", true, "actor 1 of the call's delegation chain"},
		{"the innermost actor approving", "agent:clerk", true, "actor 2 of the call's delegation chain"},
		{"a subject spelled in another case is another subject", strings.ToUpper(caller), true, ""},
		{"a person outside the call", "user:bob", true, ""},
		{"the subject, when the tool does not ask for four eyes", caller, false, ""},
		{"an actor, when the tool does not ask for four eyes", "agent:clerk", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.who = delegated
			pay := f.pay
			if tc.distinct {
				pay = withApproval(f.pay, fourEyes)
			}
			g := f.sign(t, set(f.claims(), "garm_grant.approver", tc.approver))
			res, err := f.checkCall(t, g, pay, f.payment)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if res.JTI != "grant-1" {
					t.Fatalf("result %+v, want the grant spent", res)
				}
				return
			}
			d := wantDenied(t, err, deny.PermissionDenied)
			if !strings.Contains(d.Detail, tc.refused) || !strings.Contains(d.Detail, "distinct_approver") {
				t.Errorf("detail %q does not say %q and name distinct_approver", d.Detail, tc.refused)
			}
			if strings.Contains(d.Detail, tc.approver) {
				t.Errorf("detail %q quotes the approver", d.Detail)
			}
			if spent := f.spent.Spends(); len(spent) != 0 {
				t.Errorf("a refused grant was spent: %q", spent)
			}
			// The refusal is the grant's approver, not the grant: one by
			// somebody else for the same call is accepted.
			other := f.sign(t, set(set(f.claims(), "garm_grant.approver", "user:bob"), "jti", "grant-2"))
			if _, err := f.checkCall(t, other, pay, f.payment); err != nil {
				t.Fatalf("a distinct approver's grant was refused after the refusal: %v", err)
			}
		})
	}
}
