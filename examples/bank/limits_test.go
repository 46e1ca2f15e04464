package bank_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// The bank's limits (decision 0124): a payment is limited per person and,
// lower, per agent; looking a customer up per person, high enough for the
// tour; freezing a card by how many the card processor takes at once.
func TestTheBankLimitsPaymentsPerPersonAndLowerPerAgent(t *testing.T) {
	a := buildCatalogue(t)
	var got []string
	for _, p := range a.Catalogue.GetLimits() {
		got = append(got, p.GetTool()+" "+p.GetLimit().GetId()+": "+compile.DescribeLimit(p.GetLimit())+" ("+p.GetOrigin().String()+")")
	}
	want := []string{
		"accounts.v1.get_customer per_subject: 300 per minute per tenant+subject (LIMIT_ORIGIN_CONTRACT)",
		"cards.v1.freeze_card card_processor: 4 in flight per tool (LIMIT_ORIGIN_CONTRACT)",
		"payments.v1.initiate_payment per_agent: 5 per hour per tenant+agent (LIMIT_ORIGIN_CONTRACT)",
		"payments.v1.initiate_payment per_subject: 20 per hour per tenant+subject (LIMIT_ORIGIN_CONTRACT)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("limits:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
