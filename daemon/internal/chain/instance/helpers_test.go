package instance_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain/instance"
	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
)

var (
	bankOnce sync.Once
	bankGen  *catalogue.Generation
)

// bank is the mounted fixture, built once by the first test to ask and
// shared read-only.
func bank(tb testing.TB) *catalogue.Generation {
	tb.Helper()
	bankOnce.Do(func() { bankGen = instancetest.Mounted(tb) })
	if bankGen == nil {
		tb.Fatal("the fixture did not build")
	}
	return bankGen
}

// who is a caller as step 1 folds one.
type who struct {
	subject      string
	tenant       string
	compartments []string
	agent        string
	attrs        map[string]call.Attr
}

func (w who) principal(g *catalogue.Generation) *call.Principal {
	set, kept, _ := g.CompartmentSet(w.compartments)
	p := &call.Principal{Subject: w.subject, Tenant: w.tenant, Clearance: toolv1.Clearance_CLEARANCE_PUBLIC,
		Compartments: set, CompartmentNames: kept, Attrs: w.attrs}
	if w.agent != "" {
		p.Act = []call.Actor{{Subject: w.agent, Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT}}
	}
	p.View = g.PrincipalView(p)
	return p
}

func customerID(s string) call.Attr { return call.Attr{Type: toolv1.Attribute_TYPE_STRING, String: s} }
func accounts(s ...string) call.Attr {
	return call.Attr{Type: toolv1.Attribute_TYPE_STRING_LIST, List: append([]string{}, s...)}
}

// The callers of the tests.
var (
	alice = who{subject: "user:alice", tenant: "acme", attrs: map[string]call.Attr{
		"customer_id": customerID("C-1001"), "accounts": accounts("A-1", "A-2")}}
	concierge = who{subject: "user:alice", tenant: "acme", agent: "agent:concierge", attrs: map[string]call.Attr{
		"customer_id": customerID("C-1001"), "accounts": accounts("A-1")}}
	staff    = who{subject: "user:sam", tenant: "acme", compartments: []string{"any-customer"}}
	nobody   = who{subject: "user:new", tenant: "acme"}
	noTenant = who{subject: "user:alice", attrs: alice.attrs}
)

// tool is the fixture's tool at route and its rules.
func tool(t *testing.T, g *catalogue.Generation, route string) (*call.Tool, *instance.Tool) {
	t.Helper()
	ct := g.Route(route)
	if ct == nil {
		t.Fatalf("no tool at %s", route)
	}
	return ct, g.Rules().Of(ct)
}

func message(t testing.TB, md protoreflect.MessageDescriptor, json string) protoreflect.Message {
	t.Helper()
	return cataloguetest.Message(t, md, json).ProtoReflect()
}

func asJSON(t *testing.T, m protoreflect.Message) string {
	t.Helper()
	b, err := protojson.MarshalOptions{}.Marshal(m.Interface())
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatal(err)
	}
	return compact.String()
}

// refusedBy is the rule a step 4 refusal names on the wire, or "" for
// none; it fails the test on any other error.
func refusedBy(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var d *deny.Denied
	if !errors.As(err, &d) || d.Code != deny.PermissionDenied {
		t.Fatalf("refused with %v, want permission_denied", err)
	}
	rule, _ := d.Extra["rule"].(string)
	return rule
}
