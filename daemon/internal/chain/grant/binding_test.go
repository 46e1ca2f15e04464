package grant_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestAGrantBindsTheTenantAndTheDelegationChainOfTheCallItApproved(t *testing.T) {
	// The call: the caller in tenant acme, through one agent.
	through := &call.Principal{
		Subject: caller, Tenant: "acme", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL,
		Act: []call.Actor{{Subject: "agent:planner"}},
	}
	for _, tc := range []struct {
		name  string
		edit  func(map[string]any) map[string]any
		who   *call.Principal
		wrong string // the refusal's reason; "" accepts
	}{
		{"the call's tenant and chain", bindTo("acme", "agent:planner"), through, ""},
		{"another tenant", bindTo("globex", "agent:planner"), through, "another tenant"},
		{"a tenant spelled in another case", bindTo("ACME", "agent:planner"), through, "another tenant"},
		{"another agent", bindTo("acme", "agent:clerk"), through, "another delegation chain"},
		{"a longer chain", bindTo("acme", "agent:planner", "agent:clerk"), through, "another delegation chain"},
		{"a direct call's empty chain", bindTo("acme"), through, "another delegation chain"},
		{"the chain, for a direct call", bindTo("acme", "agent:planner"), &call.Principal{Subject: caller, Tenant: "acme", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL}, "another delegation chain"},
		{"an empty chain, for a direct call", bindTo("acme"), &call.Principal{Subject: caller, Tenant: "acme", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL}, ""},
		{"a tenant that is not a string", func(c map[string]any) map[string]any { return set(c, "garm_grant.tenant", nil) }, through, "garm_grant.tenant"},
		{"a chain that is not a list", func(c map[string]any) map[string]any { return set(c, "garm_grant.act", "agent:planner") }, through, "garm_grant.act"},
		{"neither bound, as a grant of the dev identity provider", func(c map[string]any) map[string]any { return c }, through, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.who = tc.who
			g := f.sign(t, tc.edit(f.claims()))
			_, err := f.checkCall(t, g, f.pay, f.payment)
			if tc.wrong == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			d := wantDenied(t, err, deny.PermissionDenied)
			if !strings.Contains(d.Detail, tc.wrong) {
				t.Errorf("detail %q does not say %q", d.Detail, tc.wrong)
			}
			if spent := f.spent.Spends(); len(spent) != 0 {
				t.Errorf("a refused grant was spent: %q", spent)
			}
		})
	}
}

// bindTo sets the grant's tenant and act chain.
func bindTo(tenant string, act ...string) func(map[string]any) map[string]any {
	return func(c map[string]any) map[string]any {
		chain := make([]any, len(act))
		for i, a := range act {
			chain[i] = a
		}
		return set(set(c, "garm_grant.tenant", tenant), "garm_grant.act", chain)
	}
}
