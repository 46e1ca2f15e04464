// Package instancetest builds the catalogue the instance rules' tests share:
// the fixture bank (../testdata) with its attributes declared and its tools
// given their rules. The build does not write instance rules into a
// catalogue yet, so they are set on the loaded generation's tools before it
// is mounted; everything from Mount on is garmd's own path.
package instancetest

import (
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
	"path/filepath"
	"runtime"
)

// The fixture's routes.
const (
	GetCustomer  = "/instfix.v1.Bank/GetCustomer"
	ListAccounts = "/instfix.v1.Bank/ListAccounts"
	GetPayment   = "/instfix.v1.Bank/GetPayment"
	Pay          = "/instfix.v1.Bank/Pay"
)

// AgentCap is the most an agent may pay in one call, in cents.
const AgentCap = 100000

// Attributes are the declared attributes, sorted by name.
func Attributes() []*toolv1.Attribute {
	return []*toolv1.Attribute{
		{Name: "accounts", Description: "The accounts the caller may act on.", Type: toolv1.Attribute_TYPE_STRING_LIST, MaxItems: 64, MaxLen: 16},
		{Name: "customer_id", Description: "The customer the caller is.", Type: toolv1.Attribute_TYPE_STRING, MaxLen: 16},
	}
}

// Policies are the rules each tool is given, by route.
func Policies() map[string]*toolv1.InstancePolicy {
	return map[string]*toolv1.InstancePolicy{
		GetCustomer: {Require: []*toolv1.InstanceRule{
			{Id: "own_customer", Description: "Reads only the caller's own customer, unless it serves any customer.",
				Expression: `'any-customer' in principal.compartments || request.customer_id == principal.attrs.customer_id`},
			{Id: "same_tenant", Description: "Reads only within the caller's tenant.",
				Expression: `request.tenant == principal.tenant`},
		}},
		ListAccounts: {Filter: []*toolv1.RowFilter{
			{Id: "own_accounts", Description: "Lists only the accounts the caller may act on.", Field: "accounts",
				Keep:           `'any-customer' in principal.compartments || row.account_id in principal.attrs.accounts`,
				ClearOnRemoval: []string{"total", "next_page_token", "summary.count"}},
			{Id: "own_summary", Description: "Sums only the accounts the caller may act on.", Field: "summary.accounts",
				Keep: `'any-customer' in principal.compartments || row.account_id in principal.attrs.accounts`},
		}},
		GetPayment: {Reveal: []*toolv1.InstanceRule{
			{Id: "own_payment", Description: "Shows only payments from the caller's accounts.",
				Expression: `'any-customer' in principal.compartments || response.account_id in principal.attrs.accounts`},
		}},
		Pay: {Require: []*toolv1.InstanceRule{
			{Id: "large_payment", Description: "Flags payments of 5000.00 or more.", AuditOnly: true,
				Expression: `request.amount < 500000`},
			{Id: "pay_from_own", Description: "Pays only from an account the caller may act on.",
				Expression: `request.account_id in principal.attrs.accounts`},
			{Id: "agent_cap", Description: "An agent pays at most 1000.00 per call.",
				Expression: `!principal.delegated || request.amount <= 100000`},
		}},
	}
}

// Bytes is the fixture's catalogue with its attributes declared.
func Bytes(tb testing.TB) []byte {
	tb.Helper()
	c := new(cataloguev1.Catalogue)
	if err := proto.Unmarshal(cataloguetest.Build(tb, Root(tb)), c); err != nil {
		tb.Fatal(err)
	}
	c.Attributes = Attributes()
	out, err := artifact.Marshal(c)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Load is the fixture loaded, its tools given policies (Policies when nil),
// not yet mounted.
func Load(tb testing.TB, policies map[string]*toolv1.InstancePolicy) *catalogue.Generation {
	tb.Helper()
	g, err := catalogue.Load(Bytes(tb), catalogue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	Give(g, policies)
	return g
}

// Give replaces the instance policies of g's tools (Policies when nil);
// g must be the caller's own, not yet mounted.
func Give(g *catalogue.Generation, policies map[string]*toolv1.InstancePolicy) {
	if policies == nil {
		policies = Policies()
	}
	for _, t := range g.Tools {
		if inst, ok := policies[t.Method]; ok {
			p := proto.Clone(t.Policy).(*toolv1.ToolPolicy)
			p.Instance = inst
			t.Policy = p
		}
	}
}

// Mounted is the fixture with Policies, mounted.
func Mounted(tb testing.TB) *catalogue.Generation {
	tb.Helper()
	g := Load(tb, nil)
	if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
		tb.Fatal(err)
	}
	return g
}

// Root is the fixture's include root.
func Root(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate the fixture")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}
