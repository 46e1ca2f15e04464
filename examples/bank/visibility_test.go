package bank_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/examples/bank"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// These tests pin the premises of the quick-start tour — which tools each
// persona reaches and which fields of the answers are withheld from them —
// by evaluating the policy lattice (design 3.2) over the built catalogue and
// the personas' folded claims. They check the data, not garmd: garmd's own
// tests check that it enforces the lattice, and the dev stack's that it
// does so for this catalogue end to end.

// visible is the tool-visibility predicate of design 3.2.
func visible(c garmClaim, p *toolv1.ToolPolicy) bool {
	return slices.Contains(c.Verbs, p.GetVerb().String()) &&
		allows(c.Clearance, p.GetMinClearance()) &&
		covers(c.Compartments, p.GetCompartments()) &&
		(c.ToolSets == nil || slices.ContainsFunc(p.GetSets(), func(s string) bool { return slices.Contains(c.ToolSets, s) }))
}

func allows(have string, need toolv1.Clearance) bool {
	return rank(have) >= 0 && need != toolv1.Clearance_CLEARANCE_UNSPECIFIED && rank(have) >= rank(need.String())
}

func covers(have, need []string) bool {
	for _, n := range need {
		if !slices.Contains(have, n) {
			return false
		}
	}
	return true
}

// withheld is, for each tool c reaches, the output fields c may not read,
// each with the redaction it gets ("email=email_domain"); a field under a
// withheld message field is not listed again.
func withheld(a *artifact.Artifact, c garmClaim) map[string][]string {
	out := map[string][]string{}
	for _, tool := range a.Tools() {
		if !visible(c, tool.Policy) {
			continue
		}
		out[tool.FQN] = []string{}
		plan := a.Plan(string(tool.Desc.ParentFile().Package()), string(tool.Desc.Output().FullName()))
		var denied []string
		for _, rule := range plan.GetRules() {
			if slices.ContainsFunc(denied, func(d string) bool { return strings.HasPrefix(rule.GetPath(), d+".") }) {
				continue
			}
			if allows(c.Clearance, rule.GetRead()) && covers(c.Compartments, rule.GetCompartments()) {
				continue
			}
			denied = append(denied, rule.GetPath())
			arm := rule.GetOnDeny().ProtoReflect()
			out[tool.FQN] = append(out[tool.FQN], rule.GetPath()+"="+string(arm.WhichOneof(arm.Descriptor().Oneofs().ByName("kind")).Name()))
		}
	}
	return out
}

func TestWhatEachPersonaReachesAndWhatIsWithheldFromThem(t *testing.T) {
	a := buildCatalogue(t)
	i := newIdP(t)
	supportSees := map[string][]string{
		"accounts.v1.get_balance": {},
		"accounts.v1.get_customer": {
			"email=email_domain", "phone=keep_last", "date_of_birth=date_grain", "national_id=omit",
		},
		"cards.v1.list_cards":            {"cards.card_number=card_bin_last4"},
		"cards.v1.freeze_card":           {"card.card_number=card_bin_last4"},
		"cards.v1.unfreeze_card":         {"card.card_number=card_bin_last4"},
		"payments.v1.get_payment_status": {"payment.beneficiary_iban=keep_last"},
	}
	// The customer reaches the self-service tools, reading only; which
	// records he reaches is the instance rules' to decide.
	customerSees := map[string][]string{
		"accounts.v1.get_balance":        {},
		"accounts.v1.get_customer":       supportSees["accounts.v1.get_customer"],
		"cards.v1.list_cards":            {"cards.card_number=card_bin_last4"},
		"payments.v1.get_payment_status": {"payment.beneficiary_iban=keep_last"},
	}
	tests := []struct {
		name  string
		claim garmClaim
		want  map[string][]string
	}{
		{"support", token(t, i, bank.SupportPersona, "").Garm, supportSees},
		{"assistant for support", fold(token(t, i, bank.SupportPersona, bank.AssistantAgent).Garm, token(t, i, bank.SupportPersona, bank.AssistantAgent).Act.Garm), supportSees},
		{"analyst", token(t, i, bank.AnalystPersona, "").Garm, map[string][]string{
			"accounts.v1.get_balance":        {},
			"accounts.v1.get_customer":       {},
			"payments.v1.get_payment_status": {},
		}},
		{"treasurer", token(t, i, bank.TreasurerPersona, "").Garm, map[string][]string{
			"accounts.v1.get_balance":        {},
			"payments.v1.get_payment_status": {},
			"payments.v1.initiate_payment":   {},
		}},
		{"approver", token(t, i, bank.ApproverPersona, "").Garm, map[string][]string{
			"accounts.v1.get_balance":        {},
			"payments.v1.get_payment_status": {},
		}},
		{"outsider", token(t, i, bank.OutsiderPersona, "").Garm, map[string][]string{}},
		{"customer", token(t, i, bank.CustomerPersona, "").Garm, customerSees},
		{"concierge for customer", fold(token(t, i, bank.CustomerPersona, bank.ConciergeAgent).Garm, token(t, i, bank.CustomerPersona, bank.ConciergeAgent).Act.Garm), customerSees},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := withheld(a, tt.claim)
			if !maps.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("reaches and has withheld\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
}

// The approver's grant satisfies initiate_payment's approver requirements.
func TestTheApproverMayApproveAPayment(t *testing.T) {
	var pay *compile.Tool
	for _, tool := range buildCatalogue(t).Tools() {
		if tool.FQN == "payments.v1.initiate_payment" {
			pay = tool
		}
	}
	approver := token(t, newIdP(t), bank.ApproverPersona, "").Garm
	approval := pay.Policy.GetApproval()
	if !allows(approver.Clearance, approval.GetApproverMinClearance()) || !covers(approver.Compartments, approval.GetApproverCompartments()) {
		t.Fatalf("the approver (%+v) does not meet %v", approver, approval)
	}
}
