package instance_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

func TestMountCompilesEveryRuleAndCountsTheToolsCarryingThem(t *testing.T) {
	t.Parallel()
	g := bank(t)
	if n := g.Rules().Carrying(); n != 4 {
		t.Fatalf("%d tools carry rules, want 4", n)
	}
	for _, route := range []string{instancetest.GetCustomer, instancetest.ListAccounts, instancetest.GetPayment, instancetest.Pay} {
		if _, rules := tool(t, g, route); rules == nil {
			t.Errorf("%s has no compiled rules", route)
		}
	}
}

func TestARuleThatDoesNotCompileRefusesTheCatalogueNamingToolAndRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		policy *toolv1.InstancePolicy
		route  string
		want   string
	}{
		{"an undeclared attribute", &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "r", Description: "d", Expression: `principal.attrs.shoe_size == 1`}}},
			instancetest.Pay, `tool instfix.v1.pay instance rule "r" does not compile`},
		{"not a bool", &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "r", Description: "d", Expression: `request.amount`}}},
			instancetest.Pay, `instance rule "r" does not compile`},
		{"a field the request lacks", &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "r", Description: "d", Expression: `request.owner == ''`}}},
			instancetest.Pay, `instance rule "r" does not compile`},
		{"a reveal on a write tool", &toolv1.InstancePolicy{Reveal: []*toolv1.InstanceRule{{Id: "r", Description: "d", Expression: `true`}}},
			instancetest.Pay, `instance rule "r" is a reveal rule on a VERB_WRITE tool`},
		{"a filter over a scalar", &toolv1.InstancePolicy{Filter: []*toolv1.RowFilter{{Id: "f", Description: "d", Field: "total", Keep: `true`}}},
			instancetest.ListAccounts, `instance rule "f" filters "total"`},
		{"a filter clearing a missing field", &toolv1.InstancePolicy{Filter: []*toolv1.RowFilter{{Id: "f", Description: "d", Field: "accounts", Keep: `true`, ClearOnRemoval: []string{"nope"}}}},
			instancetest.ListAccounts, `instance rule "f" clears "nope"`},
		{"an id used twice", &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "r", Description: "d", Expression: `true`}, {Id: "r", Description: "d", Expression: `true`}}},
			instancetest.Pay, `instance rule "r" is declared twice`},
		{"a bad id", &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "Bad-Id", Description: "d", Expression: `true`}}},
			instancetest.Pay, `instance rule "Bad-Id" has no valid id`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g := instancetest.Load(t, map[string]*toolv1.InstancePolicy{c.route: c.policy})
			err := catalogue.Mount(g, catalogue.Steps{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("mount: %v, want %q", err, c.want)
			}
			if g.Rules() != nil {
				t.Fatal("a refused generation holds rules")
			}
		})
	}
}

func TestAReloadReusesOnlyProgramsItCanProveTheSame(t *testing.T) {
	t.Parallel()
	serving := instancetest.Mounted(t)
	same, err := catalogue.Reload(instancetest.Bytes(t), catalogue.Options{}, serving)
	if err != nil {
		t.Fatal(err)
	}
	instancetest.Give(same, nil)
	if err := catalogue.Mount(same, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	if same.Rules().Reused == 0 {
		t.Fatal("a reload of the same bytes compiled every rule again")
	}
	// The same bytes and other policies: a changed expression is compiled
	// against the new generation, the rest taken.
	policies := instancetest.Policies()
	policies[instancetest.Pay].Require[2].Expression = `!principal.delegated || request.amount <= 50000`
	changed, err := catalogue.Reload(instancetest.Bytes(t), catalogue.Options{}, serving)
	if err != nil {
		t.Fatal(err)
	}
	instancetest.Give(changed, policies)
	if err := catalogue.Mount(changed, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	if changed.Rules().Reused != same.Rules().Reused-1 {
		t.Fatalf("reused %d of a changed catalogue, %d of the same", changed.Rules().Reused, same.Rules().Reused)
	}
	// The same bytes declaring an attribute otherwise: nothing is taken,
	// since the variables a program was checked with are not the same.
	other := new(cataloguev1.Catalogue)
	if err := proto.Unmarshal(instancetest.Bytes(t), other); err != nil {
		t.Fatal(err)
	}
	other.Attributes[0].MaxItems = 32
	otherBytes, err := artifact.Marshal(other)
	if err != nil {
		t.Fatal(err)
	}
	redeclared, err := catalogue.Reload(otherBytes, catalogue.Options{}, serving)
	if err != nil {
		t.Fatal(err)
	}
	instancetest.Give(redeclared, nil)
	if err := catalogue.Mount(redeclared, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	if redeclared.Rules().Reused != 0 {
		t.Fatalf("reused %d programs across other declarations", redeclared.Rules().Reused)
	}
	// A fresh load shares no descriptor with serving: nothing is taken.
	fresh := instancetest.Load(t, nil)
	fresh2, err := catalogue.Reload(instancetest.Bytes(t), catalogue.Options{}, fresh)
	if err != nil {
		t.Fatal(err)
	}
	instancetest.Give(fresh2, nil)
	if err := catalogue.Mount(fresh2, catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
	if fresh2.Rules().Reused != 0 {
		t.Fatalf("reused %d programs from a generation that was never mounted", fresh2.Rules().Reused)
	}
}
