package bank_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/examples/bank"
	accountsv1 "github.com/garm-dev/garm/examples/bank/gen/accounts/v1"
	bankv1 "github.com/garm-dev/garm/examples/bank/gen/bank/v1"
	cardsv1 "github.com/garm-dev/garm/examples/bank/gen/cards/v1"
	paymentsv1 "github.com/garm-dev/garm/examples/bank/gen/payments/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// These tests pin the premises of the tour's instance-rule steps — who may
// ask about which customer, which accounts each caller keeps, whose payment
// each caller is shown, how much an agent may pay — by compiling the bank's
// rules with the one CEL environment the build and garmd share and
// evaluating them over the personas' tokens, folded as garmd folds them. Like
// visibility_test.go they check the data, not garmd: the dev stack's tour
// checks that garmd enforces them end to end.

// toolFiles are the bank's generated files that declare tools.
var toolFiles = []protoreflect.FileDescriptor{
	accountsv1.File_accounts_v1_accounts_proto, cardsv1.File_cards_v1_cards_proto, paymentsv1.File_payments_v1_payments_proto,
}

// rules is every instance rule of the bank's generated contract, compiled
// against the generated messages, by tool FQN and rule id.
type rules map[string]map[string]*instance.Program

func compileRules(t *testing.T) (*instance.Env, rules) {
	t.Helper()
	taxonomy := proto.GetExtension(bankv1.File_bank_v1_taxonomy_proto.Options(), toolv1.E_Attributes).(*toolv1.AttributeSet)
	compartments := proto.GetExtension(bankv1.File_bank_v1_taxonomy_proto.Options(), toolv1.E_Compartments).(*toolv1.DeclSet)
	env, err := instance.NewEnv(instance.Declarations{
		Attributes: taxonomy.GetDeclared(), Compartments: len(compartments.GetDeclared()),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := rules{}
	for _, file := range toolFiles {
		svc := file.Services().Get(0)
		for i := range svc.Methods().Len() {
			m := svc.Methods().Get(i)
			policy := proto.GetExtension(m.Options(), toolv1.E_Tool).(*toolv1.ToolPolicy)
			fqn := string(file.Package()) + "." + toolName(m)
			out[fqn] = map[string]*instance.Program{}
			compile := func(id string, target instance.Target, expression string) {
				p, err := env.Compile(target, expression)
				if err != nil {
					t.Fatalf("%s: rule %s: %v", fqn, id, err)
				}
				out[fqn][id] = p
			}
			in := policy.GetInstance()
			for _, r := range in.GetRequire() {
				compile(r.GetId(), instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REQUIRE, Request: m.Input()}, r.GetExpression())
			}
			for _, r := range in.GetReveal() {
				compile(r.GetId(), instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REVEAL, Request: m.Input(), Answer: m.Output()}, r.GetExpression())
			}
			for _, f := range in.GetFilter() {
				row := m.Output().Fields().ByName(protoreflect.Name(f.GetField())).Message()
				compile(f.GetId(), instance.Target{Phase: planv1.RulePhase_RULE_PHASE_FILTER, Request: m.Input(), Answer: row}, f.GetKeep())
			}
		}
	}
	return env, out
}

// minimum is the tool's min_clearance, from the generated contract.
func minimum(t *testing.T, fqn string) toolv1.Clearance {
	t.Helper()
	for _, file := range toolFiles {
		methods := file.Services().Get(0).Methods()
		for i := range methods.Len() {
			if string(file.Package())+"."+toolName(methods.Get(i)) == fqn {
				return proto.GetExtension(methods.Get(i).Options(), toolv1.E_Tool).(*toolv1.ToolPolicy).GetMinClearance()
			}
		}
	}
	t.Fatalf("no tool %s", fqn)
	return 0
}

// toolName is a method's tool name: get_balance for GetBalance.
func toolName(m protoreflect.MethodDescriptor) string {
	var out []byte
	for i, r := range string(m.Name()) {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				out = append(out, '_')
			}
			r += 'a' - 'A'
		}
		out = append(out, byte(r))
	}
	return string(out)
}

// principal is what garmd makes of a persona's token: the levels folded
// (fold), and the attributes folded so that an actor only narrows — the
// subject is the only source, an actor's list intersects it.
func principal(t *testing.T, i *idp.IdP, user, agent string) instance.Principal {
	t.Helper()
	c := token(t, i, user, agent)
	g := c.Garm
	attrs := map[string]any{}
	if c.Garm.Attrs != nil {
		if id, ok := c.Garm.Attrs.CustomerID.(string); ok {
			attrs["customer_id"] = id
		}
		if c.Garm.Attrs.Accounts != nil {
			attrs["accounts"] = c.Garm.Attrs.Accounts
		}
	}
	p := instance.Principal{Subject: c.Subject, Tenant: c.Tenant}
	if c.Act != nil {
		g = fold(c.Garm, c.Act.Garm)
		p.Delegated, p.Agent = true, c.Act.Subject
		if a := c.Act.Garm.Attrs; a != nil && a.Accounts != nil {
			if own, ok := attrs["accounts"].([]string); ok {
				attrs["accounts"] = intersect(own, a.Accounts)
			}
		}
	}
	p.Clearance = toolv1.Clearance(toolv1.Clearance_value[g.Clearance])
	p.Compartments = g.Compartments
	p.Attrs = attrs
	return p
}

func TestTheBanksRulesCompileWithTheSharedEnvironment(t *testing.T) {
	_, got := compileRules(t)
	want := map[string][]string{
		"accounts.v1.get_balance":        {"own_accounts", "own_customer"},
		"accounts.v1.get_customer":       {"own_customer"},
		"cards.v1.list_cards":            {"own_customer"},
		"cards.v1.freeze_card":           {"staff_only"},
		"cards.v1.unfreeze_card":         {"staff_only"},
		"payments.v1.initiate_payment":   {"agent_cap", "own_account"},
		"payments.v1.get_payment_status": {"own_payment"},
	}
	for fqn, ids := range want {
		var have []string
		for id, p := range got[fqn] {
			have = append(have, id)
			if p.HoldsForEveryCaller(minimum(t, fqn)) {
				t.Errorf("%s: rule %s holds for every caller who can see the tool", fqn, id)
			}
		}
		slices.Sort(have)
		if !slices.Equal(have, ids) {
			t.Errorf("%s carries the rules %v, want %v", fqn, have, ids)
		}
	}
}

func TestWhoMayAskAboutWhichCustomer(t *testing.T) {
	env, r := compileRules(t)
	i := newIdP(t)
	views := map[string]*instance.View{
		"customer":  env.NewView(principal(t, i, bank.CustomerPersona, "")),
		"concierge": env.NewView(principal(t, i, bank.CustomerPersona, bank.ConciergeAgent)),
		"support":   env.NewView(principal(t, i, bank.SupportPersona, "")),
		"assistant": env.NewView(principal(t, i, bank.SupportPersona, bank.AssistantAgent)),
		// A caller on the customer's roles whose token carries no attrs:
		// absent is not empty, so the rule fails rather than allows.
		"no attrs": env.NewView(instance.Principal{Subject: "user:x", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL}),
	}
	tests := []struct {
		caller, customer string
		holds            bool
		class            instance.ErrorClass
	}{
		{"customer", bank.DemoSelfServiceCustomer, true, instance.ClassNone},
		{"customer", bank.DemoCustomer, false, instance.ClassNone},
		{"concierge", bank.DemoSelfServiceCustomer, true, instance.ClassNone},
		{"concierge", bank.DemoCustomer, false, instance.ClassNone},
		{"support", bank.DemoCustomer, true, instance.ClassNone},
		{"support", "C-9999", true, instance.ClassNone},
		{"assistant", bank.DemoSelfServiceCustomer, true, instance.ClassNone},
		{"no attrs", bank.DemoSelfServiceCustomer, false, instance.ClassAbsentAttribute},
	}
	for _, fqn := range []string{"accounts.v1.get_balance", "accounts.v1.get_customer", "cards.v1.list_cards"} {
		req := requestFor(t, fqn, bank.DemoCustomer)
		for _, tt := range tests {
			setCustomer(req, tt.customer)
			holds, class := r[fqn]["own_customer"].Eval(views[tt.caller], req, nil)
			if holds != tt.holds || class != tt.class {
				t.Errorf("%s own_customer for %s asking about %s: holds %v (%v), want %v (%v)", fqn, tt.caller, tt.customer, holds, class, tt.holds, tt.class)
			}
		}
	}
}

// requestFor is a fresh request of the tool naming customer.
func requestFor(t *testing.T, fqn, customer string) proto.Message {
	t.Helper()
	var m proto.Message
	switch fqn {
	case "accounts.v1.get_balance":
		m = &accountsv1.GetBalanceRequest{}
	case "accounts.v1.get_customer":
		m = &accountsv1.GetCustomerRequest{}
	case "cards.v1.list_cards":
		m = &cardsv1.ListCardsRequest{}
	default:
		t.Fatalf("no request for %s", fqn)
	}
	setCustomer(m, customer)
	return m
}

func setCustomer(m proto.Message, customer string) {
	r := m.ProtoReflect()
	r.Set(r.Descriptor().Fields().ByName("customer_id"), protoreflect.ValueOfString(customer))
}

func TestEachCallerKeepsTheAccountsItMayActOn(t *testing.T) {
	env, r := compileRules(t)
	i := newIdP(t)
	keep := r["accounts.v1.get_balance"]["own_accounts"]
	req := &accountsv1.GetBalanceRequest{CustomerId: proto.String(bank.DemoSelfServiceCustomer)}
	rows := []string{bank.DemoConciergeAccount, "A-10004"}
	tests := []struct {
		name string
		view *instance.View
		want []string
	}{
		{"customer", env.NewView(principal(t, i, bank.CustomerPersona, "")), rows},
		{"concierge for the customer", env.NewView(principal(t, i, bank.CustomerPersona, bank.ConciergeAgent)), []string{bank.DemoConciergeAccount}},
		{"support", env.NewView(principal(t, i, bank.SupportPersona, "")), rows},
	}
	for _, tt := range tests {
		var kept []string
		for _, id := range rows {
			if holds, _ := keep.Eval(tt.view, req, &accountsv1.AccountBalance{AccountId: proto.String(id)}); holds {
				kept = append(kept, id)
			}
		}
		if !slices.Equal(kept, tt.want) {
			t.Errorf("%s keeps %v, want %v", tt.name, kept, tt.want)
		}
	}
}

func TestAPaymentIsShownOnlyToWhoMayActOnItsAccount(t *testing.T) {
	env, r := compileRules(t)
	i := newIdP(t)
	reveal := r["payments.v1.get_payment_status"]["own_payment"]
	req := &paymentsv1.GetPaymentStatusRequest{PaymentId: proto.String("PAY-000001")}
	from := func(account string) *paymentsv1.GetPaymentStatusResponse {
		return &paymentsv1.GetPaymentStatusResponse{Payment: &paymentsv1.Payment{PaymentId: proto.String("PAY-000001"), FromAccountId: proto.String(account)}}
	}
	concierge := env.NewView(principal(t, i, bank.CustomerPersona, bank.ConciergeAgent))
	support := env.NewView(principal(t, i, bank.SupportPersona, ""))
	tests := []struct {
		name   string
		view   *instance.View
		answer *paymentsv1.GetPaymentStatusResponse
		holds  bool
	}{
		{"the concierge, its own account's payment", concierge, from(bank.DemoConciergeAccount), true},
		{"the concierge, the customer's other account's payment", concierge, from("A-10004"), false},
		{"the concierge, the tour's payment (another customer's)", concierge, from(bank.DemoAccount), false},
		{"the concierge, an empty answer", concierge, &paymentsv1.GetPaymentStatusResponse{}, false},
		{"support, another customer's payment", support, from(bank.DemoAccount), true},
	}
	for _, tt := range tests {
		if holds, _ := reveal.Eval(tt.view, req, tt.answer); holds != tt.holds {
			t.Errorf("%s: shown %v, want %v", tt.name, holds, tt.holds)
		}
	}
}

func TestAnAgentPaysFromItsOwnAccountsAndWithinItsCap(t *testing.T) {
	env, r := compileRules(t)
	i := newIdP(t)
	payer := env.NewView(principal(t, i, bank.TreasurerPersona, bank.PayerAgent))
	treasurer := env.NewView(principal(t, i, bank.TreasurerPersona, ""))
	concierge := env.NewView(principal(t, i, bank.CustomerPersona, bank.ConciergeAgent))
	pay := func(account string, amount int64) *paymentsv1.InitiatePaymentRequest {
		return &paymentsv1.InitiatePaymentRequest{FromAccountId: proto.String(account), AmountMinorUnits: proto.Int64(amount)}
	}
	tests := []struct {
		name    string
		view    *instance.View
		req     *paymentsv1.InitiatePaymentRequest
		refused string // the first rule that does not hold, "" when all do
	}{
		{"the payer, the tour's payment", payer, pay(bank.DemoAccount, bank.DemoAmountMinorUnits), ""},
		{"the payer, over the cap", payer, pay(bank.DemoAccount, bank.DemoOverCapAmountMinorUnits), "agent_cap"},
		{"the treasurer, over the agent cap", treasurer, pay(bank.DemoAccount, bank.DemoOverCapAmountMinorUnits), ""},
		{"the concierge, its own account", concierge, pay(bank.DemoConciergeAccount, 1000), ""},
		{"the concierge, another customer's account", concierge, pay(bank.DemoAccount, 1000), "own_account"},
		{"the concierge, an unset amount", concierge, &paymentsv1.InitiatePaymentRequest{FromAccountId: proto.String(bank.DemoConciergeAccount)}, "agent_cap"},
	}
	for _, tt := range tests {
		refused := ""
		for _, id := range []string{"own_account", "agent_cap"} {
			if holds, _ := r["payments.v1.initiate_payment"][id].Eval(tt.view, tt.req, nil); !holds {
				refused = id
				break
			}
		}
		if refused != tt.refused {
			t.Errorf("%s: refused by %q, want %q", tt.name, refused, tt.refused)
		}
	}
}

func TestOnlyStaffFreezeACard(t *testing.T) {
	env, r := compileRules(t)
	i := newIdP(t)
	req := &cardsv1.FreezeCardRequest{CardId: proto.String(bank.DemoCard)}
	for _, c := range []struct {
		user, agent string
		holds       bool
	}{
		{bank.SupportPersona, "", true},
		{bank.SupportPersona, bank.AssistantAgent, true},
		{bank.CustomerPersona, "", false},
		{bank.CustomerPersona, bank.ConciergeAgent, false},
	} {
		view := env.NewView(principal(t, i, c.user, c.agent))
		for _, fqn := range []string{"cards.v1.freeze_card", "cards.v1.unfreeze_card"} {
			var in proto.Message = req
			if fqn == "cards.v1.unfreeze_card" {
				in = &cardsv1.UnfreezeCardRequest{CardId: proto.String(bank.DemoCard)}
			}
			if holds, _ := r[fqn]["staff_only"].Eval(view, in, nil); holds != c.holds {
				t.Errorf("%s as %s/%s: holds %v, want %v", fqn, c.user, c.agent, holds, c.holds)
			}
		}
	}
}
