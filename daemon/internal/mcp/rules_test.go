package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestAToolsEntryTellsAModelItsRulesButNeverTheirExpressions(t *testing.T) {
	t.Parallel()
	policy := &toolv1.ToolPolicy{
		Description: "Reads a customer.",
		Guidance:    &toolv1.ToolPolicy_Guidance{WhenToUse: "You need a customer."},
		Instance: &toolv1.InstancePolicy{
			Require: []*toolv1.InstanceRule{
				{Id: "same_tenant", Description: "Reads only within your tenant.", Expression: "request.tenant == principal.tenant"},
				{Id: "own_customer", Description: "Reads only your own customer.", Expression: "request.customer_id == principal.attrs.EXPRESSION_CANARY"},
			},
			Filter: []*toolv1.RowFilter{{Id: "own_accounts", Description: "Lists only your accounts.", Field: "accounts", Keep: "row.x in principal.attrs.accounts"}},
		},
	}
	tool := Tool(&call.Tool{FQN: "bank.v1.get_customer", Policy: policy, Verb: toolv1.Verb_VERB_READ})
	want := "Reads a customer.\n\nWhen to use: You need a customer.\n\nLimits:\n" +
		"- Lists only your accounts. (rule own_accounts)\n- Reads only your own customer. (rule own_customer)\n- Reads only within your tenant. (rule same_tenant)"
	if tool.Description != want {
		t.Fatalf("description\n%s\nwant\n%s", tool.Description, want)
	}
	b, err := json.Marshal(tool)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"dev.garm/rules":[{"id":"own_accounts","description":"Lists only your accounts."},`+
		`{"id":"own_customer","description":"Reads only your own customer."},{"id":"same_tenant","description":"Reads only within your tenant."}]`) {
		t.Fatalf("the entry does not list the rules in _meta: %s", b)
	}
	for _, leak := range []string{"EXPRESSION_CANARY", "principal.", "request.", "row.x"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the entry carries %q: %s", leak, b)
		}
	}
	plain := Tool(&call.Tool{FQN: "bank.v1.ping", Policy: &toolv1.ToolPolicy{Description: "Pings."}})
	if plain.Description != "Pings." {
		t.Fatalf("a tool without rules is described %q", plain.Description)
	}
	if b, _ := json.Marshal(plain); !strings.Contains(string(b), `"dev.garm/rules":[]`) {
		t.Fatalf("a tool without rules does not list [] in _meta: %s", b)
	}
}
