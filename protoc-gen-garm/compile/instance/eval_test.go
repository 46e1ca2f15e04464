package instance_test

import (
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

func TestAnAbsentAttributeIsNotAnEmptyOne(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	p := compile(t, env, require(t), `!(request.account_id in principal.attrs.accounts)`)
	request := message(req, map[string]any{"account_id": "A-9"})

	absent := env.NewView(instance.Principal{Subject: "u-1"})
	if holds, class := p.Eval(absent, request, nil); holds || class != instance.ClassAbsentAttribute {
		t.Errorf("absent attribute: holds=%v class=%v, want false absent_attribute", holds, class)
	}
	empty := env.NewView(instance.Principal{Subject: "u-1", Attrs: map[string]any{"accounts": []string{}}})
	if holds, class := p.Eval(empty, request, nil); !holds || class != instance.ClassNone {
		t.Errorf("empty attribute: holds=%v class=%v, want true (x in [] is false)", holds, class)
	}
}

func TestAWronglyTypedOrUndeclaredAttributeIsNotBound(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	v := env.NewView(instance.Principal{Attrs: map[string]any{
		"customer_id": int64(7), "accounts": "A-1", "cap": "100", "vip": 1, "undeclared": "x",
	}})
	for _, name := range []string{"principal.attrs.customer_id", "principal.attrs.accounts", "principal.attrs.cap", "principal.attrs.vip", "principal.attrs.undeclared"} {
		if v.Bound(name) {
			t.Errorf("%s is bound", name)
		}
	}
}

func TestAMissingTenantOrAgentFailsTheRule(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	request := message(req, nil)
	tenant := compile(t, env, require(t), `principal.tenant == 'acme'`)
	agent := compile(t, env, require(t), `principal.agent != 'bad'`)
	direct := env.NewView(instance.Principal{Subject: "u-1", Agent: "ignored"})
	for _, p := range []*instance.Program{tenant, agent} {
		if holds, class := p.Eval(direct, request, nil); holds || class != instance.ClassAbsentAttribute {
			t.Errorf("holds=%v class=%v, want false absent_attribute", holds, class)
		}
	}
	acme := env.NewView(instance.Principal{Subject: "u-1", Tenant: "acme", Delegated: true, Agent: "concierge"})
	for _, p := range []*instance.Program{tenant, agent} {
		if holds, class := p.Eval(acme, request, nil); !holds || class != instance.ClassNone {
			t.Errorf("holds=%v class=%v, want true", holds, class)
		}
	}
}

func TestOwnIsAllowedAnothersRefusedAndStaffReachEveryone(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	p := compile(t, env, require(t), `'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`)
	own, other := message(req, map[string]any{"account_id": "A-1"}), message(req, map[string]any{"account_id": "A-9"})
	c := env.NewView(customer())
	staff := env.NewView(instance.Principal{Subject: "s-1", Clearance: toolv1.Clearance_CLEARANCE_CONFIDENTIAL, Compartments: []string{"any-customer"}})
	for _, tc := range []struct {
		name  string
		view  *instance.View
		req   *dynamicpb.Message
		holds bool
	}{
		{"own", c, own, true},
		{"another's", c, other, false},
		{"staff", staff, other, true},
	} {
		if holds, _ := p.Eval(tc.view, tc.req, nil); holds != tc.holds {
			t.Errorf("%s: holds=%v, want %v", tc.name, holds, tc.holds)
		}
	}
}

func TestAnUnsetRequestFieldReadsAsItsZeroValue(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	// The trap lint warns about: an empty request passes a cap.
	p := compile(t, env, require(t), `request.amount <= 100000`)
	if holds, _ := p.Eval(env.NewView(customer()), message(req, nil), nil); !holds {
		t.Fatal("an unset amount did not read as 0")
	}
	all := compile(t, env, require(t), `request.items.all(i, i.owner == principal.attrs.customer_id)`)
	if holds, _ := all.Eval(env.NewView(customer()), message(req, nil), nil); !holds {
		t.Fatal("all() over an empty list did not hold")
	}
}

func TestEvaluationFailuresAreClassedNeverQuoted(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	view := env.NewView(customer())
	cases := []struct {
		expr    string
		request map[string]any
		want    instance.ErrorClass
	}{
		{`principal.attrs.cap > 0`, nil, instance.ClassAbsentAttribute},
		{`request.labels['CANARY-secret'] == 'v'`, map[string]any{"labels": map[string]string{"a": "b"}}, instance.ClassNoSuchKey},
		{`request.amount + 9223372036854775807 > 0`, map[string]any{"amount": int64(1)}, instance.ClassOverflow},
		{`request.amount / request.amount == 1`, nil, instance.ClassDivisionByZero},
		{`request.amount % request.amount == 1`, nil, instance.ClassDivisionByZero},
		{`dyn(request.account_id) == 'x' && dyn(request.account_id)`, map[string]any{"account_id": "x"}, instance.ClassOther},
		{`int(request.account_id) > 0`, map[string]any{"account_id": "CANARY-not-a-number"}, instance.ClassOther},
	}
	for _, c := range cases {
		p := compile(t, env, require(t), c.expr)
		holds, class := p.Eval(view, message(req, c.request), nil)
		if holds || class != c.want {
			t.Errorf("%s: holds=%v class=%q, want false %q", c.expr, holds, class, c.want)
		}
	}
}

func TestFiltersAndRevealsReadTheirAnswer(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, resp, item := messages(t)
	view := env.NewView(customer())
	keep := compile(t, env, filter(t), `row.owner in principal.attrs.accounts`)
	if holds, _ := keep.Eval(view, message(req, nil), message(item, map[string]any{"owner": "A-2"})); !holds {
		t.Error("own row dropped")
	}
	if holds, _ := keep.Eval(view, message(req, nil), message(item, map[string]any{"owner": "A-3"})); holds {
		t.Error("another's row kept")
	}
	show := compile(t, env, reveal(t), `response.owner == principal.attrs.customer_id`)
	if holds, _ := show.Eval(view, message(req, nil), message(resp, map[string]any{"owner": "C-1001"})); !holds {
		t.Error("own record withheld")
	}
	if holds, _ := show.Eval(view, message(req, nil), message(resp, nil)); holds {
		t.Error("an empty answer was revealed")
	}
}

func TestClearanceComparesWithItsConstants(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	p := compile(t, env, require(t), `principal.clearance >= CLEARANCE_CONFIDENTIAL`)
	if holds, _ := p.Eval(env.NewView(customer()), message(req, nil), nil); holds {
		t.Error("internal clearance passed a confidential rule")
	}
	if holds, _ := p.Eval(env.NewView(instance.Principal{Clearance: toolv1.Clearance_CLEARANCE_RESTRICTED}), message(req, nil), nil); !holds {
		t.Error("restricted clearance failed a confidential rule")
	}
}

func TestASetIsAListToEverythingButMembership(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	req, _, _ := messages(t)
	view := env.NewView(customer())
	for _, expr := range []string{
		`principal.attrs.accounts.size() == 2`,
		`principal.attrs.accounts == ['A-1', 'A-2']`,
		`principal.attrs.accounts.exists(a, a == 'A-2')`,
		`'A-1' in principal.attrs.accounts && !('A-3' in principal.attrs.accounts)`,
		`principal.attrs.accounts[0] == 'A-1'`,
		`['A-1', 'A-2'] == principal.attrs.accounts`,
	} {
		p := compile(t, env, require(t), expr)
		if holds, class := p.Eval(view, message(req, nil), nil); !holds {
			t.Errorf("%s: holds=false class=%v", expr, class)
		}
		// A list that arrives unsorted and repeated is the same set.
		unsorted := customer()
		unsorted.Attrs["accounts"] = []string{"A-2", "A-1", "A-2"}
		if holds, class := p.Eval(env.NewView(unsorted), message(req, nil), nil); !holds {
			t.Errorf("%s over an unsorted list: holds=false class=%v", expr, class)
		}
	}
}
