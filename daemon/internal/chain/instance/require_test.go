package instance_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/deny"
)

func TestRequireRulesDecideOnTheCallerAndTheRequest(t *testing.T) {
	t.Parallel()
	g := bank(t)
	cases := []struct {
		name    string
		caller  who
		route   string
		request string
		refused string
		class   string
		audit   string
	}{
		{"a customer reads its own customer", alice, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"acme"}`, "", "", ""},
		{"a customer is refused another's, naming the rule", alice, instancetest.GetCustomer, `{"customerId":"C-1002","tenant":"acme"}`, "own_customer", "", ""},
		{"a customer is refused nobody's the same way", alice, instancetest.GetCustomer, `{"customerId":"C-9999","tenant":"acme"}`, "own_customer", "", ""},
		{"staff read any customer", staff, instancetest.GetCustomer, `{"customerId":"C-1002","tenant":"acme"}`, "", "", ""},
		{"a caller without the attribute is refused, not let through", nobody, instancetest.GetCustomer, `{"customerId":"","tenant":"acme"}`, "own_customer", "absent_attribute", ""},
		{"an agent acting for the customer reads it", concierge, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"acme"}`, "", "", ""},
		{"another tenant is refused", alice, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"other"}`, "same_tenant", "", ""},
		{"a token without a tenant is refused, even for an empty tenant", noTenant, instancetest.GetCustomer, `{"customerId":"C-1001"}`, "same_tenant", "absent_attribute", ""},
		{"a customer pays from its own account", alice, instancetest.Pay, `{"accountId":"A-2","amount":250000}`, "", "", ""},
		{"a customer is refused paying from another's", alice, instancetest.Pay, `{"accountId":"A-9","amount":100}`, "pay_from_own", "", ""},
		{"an agent pays up to its cap", concierge, instancetest.Pay, `{"accountId":"A-1","amount":100000}`, "", "", ""},
		{"an agent over its cap is refused", concierge, instancetest.Pay, `{"accountId":"A-1","amount":100001}`, "agent_cap", "", ""},
		{"a person is not held to the agent's cap", alice, instancetest.Pay, `{"accountId":"A-1","amount":400000}`, "", "", ""},
		{"the agent's narrower list holds, whatever its subject may do", concierge, instancetest.Pay, `{"accountId":"A-2","amount":1}`, "pay_from_own", "", ""},
		{"an audit-only rule records and lets the call proceed", alice, instancetest.Pay, `{"accountId":"A-1","amount":600000}`, "", "", "require:large_payment"},
		{"an audit-only verdict is kept when a later rule refuses", concierge, instancetest.Pay, `{"accountId":"A-1","amount":600000}`, "agent_cap", "", "require:large_payment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ct, rules := tool(t, g, c.route)
			p := c.caller.principal(g)
			var v instance.Verdict
			err := rules.CheckRequest(p.View, message(t, ct.Input, c.request), &v)
			if got := refusedBy(t, err); got != c.refused || v.Rule != c.refused {
				t.Fatalf("refused by %q (verdict %q), want %q", got, v.Rule, c.refused)
			}
			if v.ErrorClass != c.class || strings.Join(v.AuditOnly, ",") != c.audit {
				t.Fatalf("verdict %+v, want class %q audit %q", v, c.class, c.audit)
			}
		})
	}
}

func TestAnEmptyListIsAValueAndAnAbsentOneIsNot(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.Pay)
	req := message(t, ct.Input, `{"accountId":"A-1","amount":1}`)
	empty := who{subject: "user:e", attrs: map[string]call.Attr{"accounts": accounts()}}
	var v instance.Verdict
	if refusedBy(t, rules.CheckRequest(empty.principal(g).View, req, &v)) != "pay_from_own" || v.ErrorClass != "" {
		t.Fatalf("an empty list: verdict %+v, want a plain refusal", v)
	}
	v = instance.Verdict{}
	if refusedBy(t, rules.CheckRequest(nobody.principal(g).View, req, &v)) != "pay_from_own" || v.ErrorClass != "absent_attribute" {
		t.Fatalf("an absent list: verdict %+v, want a refusal of class absent_attribute", v)
	}
}

func TestAMembershipAtMaxItemsIsDecided(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.Pay)
	var list []string
	for i := range 64 {
		list = append(list, "A-"+strings.Repeat("9", i%8)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	full := who{subject: "user:f", attrs: map[string]call.Attr{"accounts": accounts(list...)}}
	p := full.principal(g)
	var v instance.Verdict
	if err := rules.CheckRequest(p.View, message(t, ct.Input, `{"accountId":"`+list[63]+`","amount":1}`), &v); err != nil {
		t.Fatalf("the last of 64 accounts was refused: %v", err)
	}
	if refusedBy(t, rules.CheckRequest(p.View, message(t, ct.Input, `{"accountId":"A-none","amount":1}`), &v)) != "pay_from_own" {
		t.Fatal("an account outside 64 was allowed")
	}
}

func TestARequireRefusalTellsTheCallerOnlyTheRulesID(t *testing.T) {
	t.Parallel()
	g := bank(t)
	ct, rules := tool(t, g, instancetest.GetCustomer)
	const canary = "C-CANARY-77"
	var v instance.Verdict
	err := rules.CheckRequest(alice.principal(g).View, message(t, ct.Input, `{"customerId":"`+canary+`","tenant":"acme"}`), &v)
	status, body := deny.Wire(err)
	if status != 403 || string(body) != `{"code":"permission_denied","message":"The caller may not make this request.","rule":"own_customer"}` {
		t.Fatalf("%d %s", status, body)
	}
	_, detail := deny.Detail(err)
	for _, leak := range []string{canary, "principal.", "request.", "C-1001"} {
		if strings.Contains(detail, leak) {
			t.Fatalf("the ledger detail %q carries %q", detail, leak)
		}
	}
}
