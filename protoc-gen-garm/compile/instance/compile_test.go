package instance_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

func TestARuleThatDoesNotCompileIsRefusedInTheDeclarationsWords(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	cases := []struct {
		name, expr, want string
	}{
		{"undeclared attribute", `request.account_id in principal.attrs.x`, "principal.attrs.x is not a declared attribute"},
		{"undeclared attribute deep", `principal.attrs.nope.size() > 0`, "principal.attrs.nope is not a declared attribute"},
		{"unknown principal variable", `principal.role == 'admin'`, "principal.role is not a principal variable"},
		{"has over an attribute", `!has(principal.attrs.customer_id) || true`, "has() over principal.attrs.customer_id is refused"},
		{"has over the tenant", `has(principal.tenant)`, "has() over principal.tenant is refused"},
		{"not bool", `request.amount + 1`, "returns int, not bool"},
		{"wrong types", `request.amount == 'x'`, "does not type-check"},
		{"unknown field", `request.nope == 'x'`, "does not type-check"},
		{"response in a require rule", `response.owner == 'x'`, "does not type-check"},
		{"parse error", `request.amount <`, "does not parse"},
		{"extension function", `request.account_id.lowerAscii() == 'x'`, "does not type-check"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := env.Compile(require(t), c.expr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Compile(%q) = %v, want an error containing %q", c.expr, err, c.want)
			}
		})
	}
}

func TestHasOverARequestFieldCompiles(t *testing.T) {
	t.Parallel()
	p := compile(t, newEnv(t), require(t), `has(request.item) && request.item.owner == principal.subject`)
	if !slices.Contains(p.Reads(), "request.item.owner") || !slices.Equal(p.Tested(), []string{"request.item"}) {
		t.Fatalf("reads %v, tested %v", p.Reads(), p.Tested())
	}
}

func TestAProgramReportsWhatItReadsAndTheCompartmentsItTests(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	p := compile(t, env, require(t),
		`'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts && request.items.all(i, i.owner == principal.attrs.customer_id) && request.labels['k'] == 'v'`)
	want := []string{
		"principal.attrs.accounts", "principal.attrs.customer_id", "principal.compartments",
		"request.account_id", "request.items", "request.items.owner", "request.labels",
	}
	if !slices.Equal(p.Reads(), want) {
		t.Errorf("Reads() = %v, want %v", p.Reads(), want)
	}
	if !slices.Equal(p.Compartments(), []string{"any-customer"}) {
		t.Errorf("Compartments() = %v", p.Compartments())
	}
	if !slices.Equal(p.AllOver(), []string{"request.items"}) {
		t.Errorf("AllOver() = %v", p.AllOver())
	}
	f := compile(t, env, filter(t), `row.owner == principal.attrs.customer_id || principal.clearance >= CLEARANCE_CONFIDENTIAL`)
	if !slices.Equal(f.Reads(), []string{"principal.attrs.customer_id", "principal.clearance", "row.owner"}) {
		t.Errorf("filter Reads() = %v", f.Reads())
	}
}

func TestTheCostOfARuleIsBoundedByDeclaredSizes(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, expr := range []string{
		`request.account_id == principal.attrs.customer_id`,
		`request.account_id in principal.attrs.accounts`,
		`request.items.all(i, i.owner in principal.attrs.accounts)`,
		`request.amount <= 100000 || !principal.delegated`,
		`principal.tenant == 'acme'`,
		`request.labels.exists(k, k == principal.attrs.customer_id)`,
	} {
		p := compile(t, env, require(t), expr)
		if p.CostBound() == 0 || p.CostBound() > instance.MaxCost {
			t.Errorf("%s: CostBound() = %d", expr, p.CostBound())
		}
	}
}

func TestAnUnboundedRuleIsRefusedWithWhatToBound(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	cases := []struct{ expr, want string }{
		{`request.free.contains('x')`, "bound request.free with (buf.validate.field).string.max_len"},
		{`request.free.matches('^a+$')`, "bound request.free with (buf.validate.field).string.max_len"},
		{`request.tags.all(t, t in principal.attrs.accounts)`, "bound request.tags with (buf.validate.field).repeated.max_items"},
	}
	for _, c := range cases {
		_, err := env.Compile(require(t), c.expr)
		var costly *instance.CostError
		if !errors.As(err, &costly) || !strings.Contains(err.Error(), "unbounded") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%q) = %v, want unbounded and %q", c.expr, err, c.want)
		}
	}
}

func TestARuleOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	_, err := newEnv(t).Compile(require(t), `request.many.all(i, i.owner in principal.attrs.accounts)`)
	if err == nil || !strings.Contains(err.Error(), "above the limit") {
		t.Fatalf("Compile = %v, want above the limit", err)
	}
}

func TestEachPhaseSeesOnlyItsOwnAnswer(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	compile(t, env, reveal(t), `response.owner == principal.attrs.customer_id`)
	compile(t, env, filter(t), `row.owner in principal.attrs.accounts`)
	for _, c := range []struct {
		target instance.Target
		expr   string
	}{
		{reveal(t), `row.owner == 'x'`},
		{filter(t), `response.owner == 'x'`},
	} {
		if _, err := env.Compile(c.target, c.expr); err == nil {
			t.Errorf("%s compiled in phase %v", c.expr, c.target.Phase)
		}
	}
	if _, err := env.Compile(instance.Target{Phase: planv1.RulePhase_RULE_PHASE_REVEAL, Request: require(t).Request}, `true`); err == nil {
		t.Error("a reveal rule compiled without a response message")
	}
}

func TestADeclarationWithoutATypeIsRefused(t *testing.T) {
	t.Parallel()
	_, err := instance.NewEnv(instance.Declarations{Attributes: []*toolv1.Attribute{{Name: "x"}}})
	if err == nil {
		t.Fatal("NewEnv accepted an attribute with no type")
	}
}

func TestARuleThatHoldsForEveryCallerIsFound(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	internal := toolv1.Clearance_CLEARANCE_INTERNAL
	for _, c := range []struct {
		expr      string
		minimum   toolv1.Clearance
		tautology bool
	}{
		{`request.account_id in principal.attrs.accounts || true`, internal, true},
		{`principal.clearance >= CLEARANCE_INTERNAL || request.amount < 5`, internal, true},
		{`principal.clearance >= CLEARANCE_CONFIDENTIAL || request.amount < 5`, internal, false},
		{`'any-customer' in principal.compartments || request.account_id in principal.attrs.accounts`, internal, false},
		{`request.amount <= 100000`, internal, false},
		{`principal.delegated || !principal.delegated`, internal, false}, // beyond partial evaluation: not reported
	} {
		p := compile(t, env, require(t), c.expr)
		if got := p.HoldsForEveryCaller(c.minimum); got != c.tautology {
			t.Errorf("%s: HoldsForEveryCaller = %v, want %v", c.expr, got, c.tautology)
		}
	}
}
