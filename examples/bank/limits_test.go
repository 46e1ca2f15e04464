package bank_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// The bank's limits (decision 0124): a payment is limited per person and,
// lower, per agent; looking a customer up per person, high enough for the
// tour; listing cards per person and, far lower, per agent acting for one
// (the limit the tour's agent meets); freezing a card by how many the card
// processor takes at once.
func TestTheBankLimitsPaymentsPerPersonAndLowerPerAgent(t *testing.T) {
	a := buildCatalogue(t)
	var got []string
	for _, p := range a.Catalogue.GetLimits() {
		got = append(got, p.GetTool()+" "+p.GetLimit().GetId()+": "+compile.DescribeLimit(p.GetLimit())+" ("+p.GetOrigin().String()+")")
	}
	want := []string{
		"accounts.v1.get_customer per_subject: 300 per minute per tenant+subject (LIMIT_ORIGIN_CONTRACT)",
		"cards.v1.freeze_card card_processor: 4 in flight per tool (LIMIT_ORIGIN_CONTRACT)",
		"cards.v1.list_cards per_agent: 3 per minute per tenant+subject+agent (LIMIT_ORIGIN_CONTRACT)",
		"cards.v1.list_cards per_subject: 60 per minute per tenant+subject (LIMIT_ORIGIN_CONTRACT)",
		"payments.v1.initiate_payment per_agent: 5 per hour per tenant+agent (LIMIT_ORIGIN_CONTRACT)",
		"payments.v1.initiate_payment per_subject: 20 per hour per tenant+subject (LIMIT_ORIGIN_CONTRACT)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("limits:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The catalogue.yaml of docs/operators.md's "Tightening limits in
// catalogue.yaml" builds against the bank and does what the section says.
func TestTheOperatorsTighteningExampleBuildsAgainstTheBank(t *testing.T) {
	doc, err := os.ReadFile(repoPath("docs/operators.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Tightening limits in catalogue.yaml\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/operators.md has no yaml block under \"Tightening limits in catalogue.yaml\"")
	}
	proto, err := filepath.Abs(repoPath("examples/bank/proto"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(block, "include: [proto]\n") {
		t.Fatal("the example's include changed; this test puts the bank's proto root in its place")
	}
	path := filepath.Join(t.TempDir(), "catalogue.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(block, "include: [proto]", "include: ["+proto+"]", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := builder.FromManifest(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	origins := map[string]string{}
	for _, p := range c.Artifact.Catalogue.GetLimits() {
		origins[p.GetTool()+" "+p.GetLimit().GetId()] = strings.TrimPrefix(p.GetOrigin().String(), "LIMIT_ORIGIN_") + " " + compile.DescribeLimit(p.GetLimit())
	}
	for key, want := range map[string]string{
		"payments.v1.initiate_payment per_agent":  "TIGHTENED 2 per hour per tenant+agent",
		"payments.v1.initiate_payment tenant_day": "DEPLOYMENT 100000 per day per tenant",
		"accounts.v1.get_customer agent_reads":    "DEPLOYMENT 600 per hour per tenant+agent",
		"accounts.v1.get_customer per_subject":    "CONTRACT 300 per minute per tenant+subject",
	} {
		if got := origins[key]; got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if got := origins["cards.v1.freeze_card agent_reads"]; got != "" {
		t.Errorf("a tool outside self-service got the set's limit: %s", got)
	}
}
