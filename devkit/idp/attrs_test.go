package idp_test

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
)

// attrPersonas is a customer holding two accounts, a concierge agent whose own list is narrower,
// and a user and an agent without attributes. Numbers, booleans and an empty list are there to
// pin every shape a value may take.
const attrPersonas = `
tenant: acme
roles:
  self-service: {clearance: internal, verbs: [read]}
users:
  customer:
    subject: user:cora@example.com
    roles: [self-service]
    attrs:
      customer_id: C-1001
      accounts: [A-10001, A-10002]
      tier: 2
      verified: true
      cards: []
  plain:
    subject: user:pat@example.com
    roles: [self-service]
agents:
  concierge:
    subject: agent:concierge
    roles: [self-service]
    may_act_for: [customer, plain]
    attrs:
      accounts: [A-10001]
  helper:
    subject: agent:helper
    roles: [self-service]
    may_act_for: [customer]
`

func newAttrIdP(t *testing.T) *idp.IdP {
	t.Helper()
	p, err := idp.ParsePersonas([]byte(attrPersonas))
	if err != nil {
		t.Fatalf("ParsePersonas: %v", err)
	}
	i, err := idp.New(p, idp.Options{Now: fixedClock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return i
}

func TestAUsersAttrsAreIssuedAsGarmAttrs(t *testing.T) {
	t.Parallel()
	token, err := newAttrIdP(t).Token("customer", "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := claimsOf(t, token)
	want := with(registered("user:cora@example.com"), map[string]any{
		"garm": map[string]any{
			"clearance": "CLEARANCE_INTERNAL", "compartments": []string{}, "verbs": []string{"VERB_READ"},
			"kind": "PRINCIPAL_KIND_USER",
			"attrs": map[string]any{
				"customer_id": "C-1001", "accounts": []string{"A-10001", "A-10002"},
				"tier": 2, "verified": true, "cards": []string{},
			},
		},
	})
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Fatalf("claims:\n%s\nwant:\n%s", g, w)
	}
}

// An agent's attrs go into act.garm.attrs beside its own authority, never merged into the user's:
// garmd folds the levels, and a hop may only narrow.
func TestAnAgentsOwnAttrsAreIssuedAtItsOwnLevel(t *testing.T) {
	t.Parallel()
	i := newAttrIdP(t)
	ctx := testContext(t)
	srv := start(t, i)
	inCode, err := i.Token("customer", "concierge")
	if err != nil {
		t.Fatal(err)
	}
	overHTTP := fetchToken(t, ctx, srv, "user=customer&as=concierge")
	for name, token := range map[string]string{"Token": inCode, "GET /token": overHTTP} {
		claims, _ := claimsOf(t, token)
		subject := claims["garm"].(map[string]any)["attrs"].(map[string]any)
		if g, w := asJSON(t, subject["accounts"]), asJSON(t, []string{"A-10001", "A-10002"}); g != w {
			t.Errorf("%s: the subject's accounts are %s, want the customer's own %s", name, g, w)
		}
		act := claims["act"].(map[string]any)["garm"].(map[string]any)
		if g, w := asJSON(t, act["attrs"]), asJSON(t, map[string]any{"accounts": []string{"A-10001"}}); g != w {
			t.Errorf("%s: act.garm.attrs is %s, want the concierge's own %s", name, g, w)
		}
	}
}

// A persona that declares no attrs issues no garm.attrs at all, at either level: an absent
// object is garmd's "no attributes", never an empty one standing for something.
func TestAPersonaWithoutAttrsIssuesNoAttrsClaim(t *testing.T) {
	t.Parallel()
	i := newAttrIdP(t)
	for _, c := range []struct{ user, as string }{{"plain", ""}, {"customer", "helper"}, {"plain", "concierge"}} {
		token, err := i.Token(c.user, c.as)
		if err != nil {
			t.Fatal(err)
		}
		claims, _ := claimsOf(t, token)
		_, subjectHas := claims["garm"].(map[string]any)["attrs"]
		actorHas := false
		if act, ok := claims["act"].(map[string]any); ok {
			_, actorHas = act["garm"].(map[string]any)["attrs"]
		}
		wantSubject := c.user == "customer"
		wantActor := c.as == "concierge"
		if subjectHas != wantSubject || actorHas != wantActor {
			t.Errorf("user=%s as=%s: garm.attrs present %v (want %v), act.garm.attrs present %v (want %v)",
				c.user, c.as, subjectHas, wantSubject, actorHas, wantActor)
		}
	}
}

func TestAttrsThatNoDeclarationCouldHoldAreRefusedAtLoad(t *testing.T) {
	t.Parallel()
	doc := `
tenant: acme
roles: {r: {clearance: internal}}
users:
  u:
    subject: user:u
    roles: [r]
    attrs:
      Customer-ID: C-1
      empty: ""
      nothing: null
      ratio: 0.5
      nested: {a: b}
      mixed: [A-1, 2]
      blank_item: [A-1, ""]
      huge: 18446744073709551615
      fine: ok
agents:
  a:
    subject: agent:a
    roles: [r]
    may_act_for: [u]
    attrs: {lists: [[x]]}
`
	_, err := idp.ParsePersonas([]byte(doc))
	var perr *idp.PersonaError
	if !errors.As(err, &perr) {
		t.Fatalf("ParsePersonas: %v, want a *PersonaError", err)
	}
	const shapes = "not a non-empty string, an integer, a boolean or a list of non-empty strings"
	want := []string{
		`users.u: attrs: name "Customer-ID" does not match ^[a-z][a-z0-9_]{0,62}$`,
		`users.u: attrs.blank_item: ` + shapes,
		`users.u: attrs.empty: ` + shapes,
		`users.u: attrs.huge: ` + shapes,
		`users.u: attrs.mixed: ` + shapes,
		`users.u: attrs.nested: ` + shapes,
		`users.u: attrs.nothing: ` + shapes,
		`users.u: attrs.ratio: ` + shapes,
		`agents.a: attrs.lists: ` + shapes,
	}
	if !slices.Equal(perr.Problems, want) {
		t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(perr.Problems, "\n  "), strings.Join(want, "\n  "))
	}
}

// The canonical file, served at /personas, reads back to an equal value with every attribute in
// its canonical shape, an empty list still a list.
func TestAttrsReadBackFromThePersonasEndpoint(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	i := newAttrIdP(t)
	srv := start(t, i)
	res := do(t, ctx, http.MethodGet, srv.URL()+idp.PersonasPath)
	if res.status != http.StatusOK {
		t.Fatalf("GET /personas: %d %s", res.status, res.body)
	}
	back, err := idp.ParsePersonas(res.body)
	if err != nil {
		t.Fatalf("served JSON does not read back: %v\n%s", err, res.body)
	}
	if !reflect.DeepEqual(back, i.Personas()) {
		t.Fatalf("round trip changed the personas:\nserved %s", res.body)
	}
	want := map[string]any{
		"customer_id": "C-1001", "accounts": []string{"A-10001", "A-10002"},
		"tier": int64(2), "verified": true, "cards": []string{},
	}
	if got := back.Users["customer"].Attrs; !reflect.DeepEqual(got, want) {
		t.Errorf("customer's attrs read back as %#v, want %#v", got, want)
	}
	if got := back.Users["plain"].Attrs; got != nil {
		t.Errorf("plain's attrs read back as %#v, want none", got)
	}
}

func TestPersonasReturnsACopyOfTheAttrs(t *testing.T) {
	t.Parallel()
	i := newAttrIdP(t)
	p := i.Personas()
	p.Users["customer"].Attrs["accounts"].([]string)[0] = "A-99999"
	p.Users["customer"].Attrs["customer_id"] = "C-9999"
	again := i.Personas().Users["customer"].Attrs
	if again["customer_id"] != "C-1001" || again["accounts"].([]string)[0] != "A-10001" {
		t.Fatalf("modifying Personas() changed the IdP: %#v", again)
	}
	token, err := i.Token("customer", "")
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := claimsOf(t, token)
	if g := asJSON(t, claims["garm"].(map[string]any)["attrs"].(map[string]any)["accounts"]); !strings.Contains(g, "A-10001") {
		t.Fatalf("modifying Personas() changed the token: %s", g)
	}
}
