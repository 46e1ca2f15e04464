package listing_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// withRules is the calculator with add carrying a rule of every phase,
// declared out of id order. The generation is the test's own: its tool's
// policy is replaced, never changed in place.
func withRules(t *testing.T) *catalogue.Generation {
	t.Helper()
	g, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	add := g.Route("/calc.v1.Calculator/Add")
	policy := proto.Clone(add.Policy).(*toolv1.ToolPolicy)
	policy.Instance = &toolv1.InstancePolicy{
		Require: []*toolv1.InstanceRule{
			{Id: "small_sums", Description: "Adds numbers below a thousand.", Expression: "request.a < 1000.0 && SECRET_EXPRESSION_CANARY"},
			{Id: "a_first", Description: "Runs first.", Expression: "true"},
		},
		Reveal: []*toolv1.InstanceRule{{Id: "own_sum", Description: "Shows a sum you own.", Expression: "response.owner == principal.subject"}},
		Filter: []*toolv1.RowFilter{{Id: "mine", Description: "Keeps your rows.", Field: "rows", Keep: "row.owner == principal.subject"}},
	}
	add.Policy = policy
	return g
}

func TestTheListingShowsEachToolsRulesByIdAndDescriptionNeverTheExpression(t *testing.T) {
	t.Parallel()
	g := withRules(t)
	body, err := listing.New(listing.Options{}).List(g, caller{clearance: public, verbs: []toolv1.Verb{read}}.principal(t, g), agent)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "SECRET_EXPRESSION_CANARY") || strings.Contains(string(body), "principal.subject") {
		t.Fatalf("the listing carries a rule's expression: %s", body)
	}
	var got struct {
		Tools []struct {
			FQN   string          `json:"fqn"`
			Rules json.RawMessage `json:"rules"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"calc.v1.add": `[{"id":"a_first","description":"Runs first."},{"id":"mine","description":"Keeps your rows."},` +
			`{"id":"own_sum","description":"Shows a sum you own."},{"id":"small_sums","description":"Adds numbers below a thousand."}]`,
	}
	for _, tool := range got.Tools {
		w, ok := want[tool.FQN]
		if !ok {
			w = "[]"
		}
		if string(tool.Rules) != w {
			t.Errorf("%s lists rules %s, want %s", tool.FQN, tool.Rules, w)
		}
	}
}
