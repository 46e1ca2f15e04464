package bank_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/examples/bank"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// repoPath is a path relative to the repository root, from this package's
// directory.
func repoPath(path string) string { return filepath.Join("..", "..", filepath.FromSlash(path)) }

// buildCatalogue builds the bank's catalogue from ManifestPath, as the dev
// stack does.
func buildCatalogue(t *testing.T) *artifact.Artifact {
	t.Helper()
	c, err := builder.FromManifest(context.Background(), repoPath(bank.ManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	return c.Artifact
}

func TestTheCatalogueBuildsWithEveryToolOfTheBank(t *testing.T) {
	a := buildCatalogue(t)
	var fqns []string
	for _, tool := range a.Tools() {
		fqns = append(fqns, tool.FQN)
	}
	want := []string{
		"accounts.v1.get_balance", "accounts.v1.get_customer",
		"cards.v1.list_cards", "cards.v1.freeze_card", "cards.v1.unfreeze_card",
		"payments.v1.initiate_payment", "payments.v1.get_payment_status",
	}
	if !slices.Equal(fqns, want) {
		t.Fatalf("tools %v, want %v", fqns, want)
	}
	decls := func(ds []*toolv1.Decl) (names []string) {
		for _, d := range ds {
			names = append(names, d.GetName())
		}
		return names
	}
	if got := decls(a.Catalogue.GetCompartments()); !slices.Equal(got, []string{"any-customer", "card-data", "financial", "pii-contact", "pii-identity"}) {
		t.Errorf("compartments %v", got)
	}
	if got := decls(a.Catalogue.GetToolSets()); !slices.Equal(got, []string{"payments", "self-service", "support"}) {
		t.Errorf("tool sets %v", got)
	}
	if got := a.Catalogue.GetProvenance().GetSource(); got != "github.com/garm-dev/garm/examples/bank" {
		t.Errorf("source %q", got)
	}
}

// garmd routes a package's calls only to a service advertising the
// catalogue's descriptor hash: committed bindings that lag the contract
// would serve nothing.
func TestTheGeneratedBindingsMatchTheCatalogue(t *testing.T) {
	hashes := buildCatalogue(t).Catalogue.GetDescriptorHashes()
	for pkg, generated := range map[string]string{
		"accounts.v1": accountsv1.DescriptorHash,
		"cards.v1":    cardsv1.DescriptorHash,
		"payments.v1": paymentsv1.DescriptorHash,
	} {
		if hashes[pkg] != generated {
			t.Errorf("%s: the catalogue's descriptor hash is %s, the generated bindings' %s; run make generate", pkg, hashes[pkg], generated)
		}
	}
}

// What garmd's mount checks (design 7.2) look at: the payment needs step 5
// and the audit sink, the card writes need notify.
func TestTheGovernanceEachToolDeclares(t *testing.T) {
	policies := map[string]*toolv1.ToolPolicy{}
	for _, tool := range buildCatalogue(t).Tools() {
		policies[tool.FQN] = tool.Policy
	}
	pay := policies["payments.v1.initiate_payment"]
	approval, audit := pay.GetApproval(), pay.GetAudit()
	if pay.GetVerb() != toolv1.Verb_VERB_DESTRUCTIVE || approval.GetMode() != toolv1.ToolPolicy_Approval_MODE_GRANT ||
		approval.GetApproverMinClearance() != toolv1.Clearance_CLEARANCE_RESTRICTED ||
		!slices.Equal(approval.GetApproverCompartments(), []string{"financial"}) || approval.GetMaxGrantAgeSeconds() != 300 ||
		!slices.Equal(approval.GetMaterialFields(), []string{"from_account_id", "amount_minor_units", "currency_code", "beneficiary_iban"}) ||
		!approval.GetDistinctApprover() ||
		audit.GetLevel() != toolv1.ToolPolicy_Audit_LEVEL_AUDIT || !audit.GetFailClosed() || audit.GetRetainDays() != 2555 {
		t.Errorf("initiate_payment declares %v", pay)
	}
	for _, fqn := range []string{"cards.v1.freeze_card", "cards.v1.unfreeze_card"} {
		p := policies[fqn]
		if p.GetVerb() != toolv1.Verb_VERB_WRITE || p.GetApproval().GetMode() != toolv1.ToolPolicy_Approval_MODE_NOTIFY ||
			p.GetEffects().GetReversibility() != toolv1.Reversibility_REVERSIBILITY_COMPENSABLE {
			t.Errorf("%s declares %v", fqn, p)
		}
	}
	if got := policies["cards.v1.freeze_card"].GetEffects().GetCompensatingTool(); got != "cards.v1.unfreeze_card" {
		t.Errorf("freeze_card is compensated by %q", got)
	}
	for fqn, p := range policies {
		g := p.GetGuidance()
		if p.GetTitle() == "" || g.GetWhenToUse() == "" || g.GetWhenNotToUse() == "" || g.GetOnError() == "" || len(g.GetExamples()) == 0 {
			t.Errorf("%s lacks a title or guidance: %v", fqn, p)
		}
	}
}
