package bank_test

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/examples/bank"
)

// garmClaim is one level's garm claim of a dev IdP token.
type garmClaim struct {
	Clearance    string   `json:"clearance"`
	Compartments []string `json:"compartments"`
	Verbs        []string `json:"verbs"`
	ToolSets     []string `json:"tool_sets"` // absent: unscoped
	Kind         string   `json:"kind"`
	Attrs        *attrs   `json:"attrs"`
}

// attrs are the bank's principal attributes, as a token's garm.attrs carries
// them; a field is nil when the level does not carry it.
type attrs struct {
	CustomerID any      `json:"customer_id"`
	Accounts   []string `json:"accounts"`
}

type tokenClaims struct {
	Subject string    `json:"sub"`
	Tenant  string    `json:"tenant"`
	Garm    garmClaim `json:"garm"`
	Act     *struct {
		Subject string    `json:"sub"`
		Garm    garmClaim `json:"garm"`
	} `json:"act"`
}

func loadPersonas(t *testing.T) *idp.Personas {
	t.Helper()
	p, err := idp.LoadPersonas(repoPath(bank.PersonasPath))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// token is what the dev IdP issues for user, acting through agent when it
// is not empty: its claims, read without verifying (the IdP signed them a
// moment ago).
func token(t *testing.T, i *idp.IdP, user, agent string) tokenClaims {
	t.Helper()
	jwt, err := i.Token(user, agent)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(jwt, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c tokenClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func newIdP(t *testing.T) *idp.IdP {
	t.Helper()
	i, err := idp.New(loadPersonas(t), idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func TestThePersonaFileNamesTheHandlesAndTenantTheQuickStartUses(t *testing.T) {
	p := loadPersonas(t)
	if p.Tenant != bank.Tenant {
		t.Errorf("tenant %q, want %q", p.Tenant, bank.Tenant)
	}
	users := []string{
		bank.AnalystPersona, bank.ApproverPersona, bank.CustomerPersona, bank.OutsiderPersona, bank.SupportPersona, bank.TreasurerPersona,
	}
	if got := slices.Sorted(maps.Keys(p.Users)); !slices.Equal(got, users) {
		t.Errorf("users %v, want %v", got, users)
	}
	if got := slices.Sorted(maps.Keys(p.Agents)); !slices.Equal(got, []string{bank.AssistantAgent, bank.ConciergeAgent, bank.PayerAgent}) {
		t.Errorf("agents %v", got)
	}
	if got := p.Agents[bank.AssistantAgent].MayActFor; !slices.Equal(got, []string{bank.SupportPersona}) {
		t.Errorf("the assistant may act for %v", got)
	}
	if got := p.Agents[bank.PayerAgent].MayActFor; !slices.Equal(got, []string{bank.TreasurerPersona}) {
		t.Errorf("the payer may act for %v", got)
	}
	if got := p.Agents[bank.ConciergeAgent].MayActFor; !slices.Equal(got, []string{bank.CustomerPersona}) {
		t.Errorf("the concierge may act for %v", got)
	}
}

func TestEachPersonaFoldsToTheAuthorityItIsMeantToHave(t *testing.T) {
	i := newIdP(t)
	tests := []struct {
		handle string
		want   garmClaim
	}{
		{bank.SupportPersona, garmClaim{"CLEARANCE_INTERNAL", []string{"any-customer", "card-data", "financial", "pii-contact"}, []string{"VERB_READ", "VERB_WRITE"}, []string{"support"}, "PRINCIPAL_KIND_USER", nil}},
		{bank.AnalystPersona, garmClaim{"CLEARANCE_RESTRICTED", []string{"any-customer", "financial", "pii-contact", "pii-identity"}, []string{"VERB_READ"}, nil, "PRINCIPAL_KIND_USER", nil}},
		{bank.TreasurerPersona, garmClaim{"CLEARANCE_RESTRICTED", []string{"any-customer", "financial"}, []string{"VERB_READ", "VERB_WRITE", "VERB_DESTRUCTIVE"}, []string{"payments"}, "PRINCIPAL_KIND_USER", nil}},
		{bank.ApproverPersona, garmClaim{"CLEARANCE_RESTRICTED", []string{"any-customer", "financial"}, []string{"VERB_READ"}, []string{"payments"}, "PRINCIPAL_KIND_USER", nil}},
		{bank.OutsiderPersona, garmClaim{"CLEARANCE_CONFIDENTIAL", []string{}, []string{"VERB_READ"}, nil, "PRINCIPAL_KIND_USER", nil}},
		{bank.CustomerPersona, garmClaim{"CLEARANCE_INTERNAL", []string{"card-data", "financial", "pii-contact"}, []string{"VERB_READ"}, []string{"self-service"}, "PRINCIPAL_KIND_USER", &attrs{"C-1002", []string{"A-10003", "A-10004"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.handle, func(t *testing.T) {
			c := token(t, i, tt.handle, "")
			if c.Tenant != bank.Tenant || c.Act != nil {
				t.Errorf("tenant %q, act %v", c.Tenant, c.Act)
			}
			if !equalClaims(c.Garm, tt.want) {
				t.Errorf("garm claim %+v, want %+v", c.Garm, tt.want)
			}
		})
	}
}

// garmd intersects the levels of a delegation (design 7.5): the assistant's
// own role is at least as wide as support's, so acting for support it has
// exactly support's authority, no more and no less.
func TestTheAssistantActingForSupportHasExactlySupportsAuthority(t *testing.T) {
	i := newIdP(t)
	c := token(t, i, bank.SupportPersona, bank.AssistantAgent)
	if c.Act == nil || c.Act.Subject != "agent:support-assistant" || c.Act.Garm.Kind != "PRINCIPAL_KIND_AGENT" {
		t.Fatalf("act claim %+v", c.Act)
	}
	if got, want := fold(c.Garm, c.Act.Garm), token(t, i, bank.SupportPersona, "").Garm; !equalAuthority(got, want) {
		t.Fatalf("acting for support the assistant folds to %+v, want support's %+v", got, want)
	}
	if _, err := i.Token(bank.AnalystPersona, bank.AssistantAgent); err == nil {
		t.Error("the assistant may act for the analyst")
	}
}

// fold is garmd's fold over a delegation chain (design 7.5): the lowest
// clearance, the common compartments and verbs, and the common tool-set
// scope, where a level without a scope adds no constraint.
func fold(levels ...garmClaim) garmClaim {
	out := levels[0]
	for _, l := range levels[1:] {
		if rank(l.Clearance) < rank(out.Clearance) {
			out.Clearance = l.Clearance
		}
		out.Compartments = intersect(out.Compartments, l.Compartments)
		out.Verbs = intersect(out.Verbs, l.Verbs)
		switch {
		case l.ToolSets == nil:
		case out.ToolSets == nil:
			out.ToolSets = l.ToolSets
		default:
			out.ToolSets = intersect(out.ToolSets, l.ToolSets)
		}
	}
	return out
}

func intersect(a, b []string) []string {
	out := []string{}
	for _, s := range a {
		if slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

var clearances = []string{"CLEARANCE_PUBLIC", "CLEARANCE_INTERNAL", "CLEARANCE_CONFIDENTIAL", "CLEARANCE_RESTRICTED"}

// rank orders clearances; an unknown one ranks below every known one.
func rank(c string) int { return slices.Index(clearances, c) }

func equalAuthority(a, b garmClaim) bool {
	return a.Clearance == b.Clearance && slices.Equal(a.Compartments, b.Compartments) && slices.Equal(a.Verbs, b.Verbs) &&
		(a.ToolSets == nil) == (b.ToolSets == nil) && slices.Equal(a.ToolSets, b.ToolSets)
}

func equalClaims(a, b garmClaim) bool {
	return equalAuthority(a, b) && a.Kind == b.Kind && reflect.DeepEqual(a.Attrs, b.Attrs)
}

// The concierge carries its own, narrower account list at its own level;
// garmd's fold intersects it with the customer's, and the customer id comes
// from the customer alone. It holds no any-customer, and neither does the
// customer, so the rules hold it to his records.
func TestTheConciergeActingForTheCustomerNarrowsHisAccounts(t *testing.T) {
	i := newIdP(t)
	c := token(t, i, bank.CustomerPersona, bank.ConciergeAgent)
	if c.Act == nil || c.Act.Subject != "agent:banking-concierge" || c.Act.Garm.Kind != "PRINCIPAL_KIND_AGENT" {
		t.Fatalf("act claim %+v", c.Act)
	}
	if got, want := c.Garm.Attrs, (&attrs{bank.DemoSelfServiceCustomer, []string{bank.DemoConciergeAccount, "A-10004"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("the customer's attrs are %+v, want %+v", got, want)
	}
	if got, want := c.Act.Garm.Attrs, (&attrs{nil, []string{bank.DemoConciergeAccount}}); !reflect.DeepEqual(got, want) {
		t.Errorf("the concierge's own attrs are %+v, want %+v", got, want)
	}
	if got := intersect(c.Garm.Attrs.Accounts, c.Act.Garm.Attrs.Accounts); !slices.Equal(got, []string{bank.DemoConciergeAccount}) {
		t.Errorf("acting for the customer the concierge may act on %v", got)
	}
	for _, level := range []garmClaim{c.Garm, c.Act.Garm} {
		if slices.Contains(level.Compartments, "any-customer") {
			t.Errorf("a level of the concierge's token holds any-customer: %+v", level)
		}
	}
	if _, err := i.Token(bank.SupportPersona, bank.ConciergeAgent); err == nil {
		t.Error("the concierge may act for support")
	}
}
