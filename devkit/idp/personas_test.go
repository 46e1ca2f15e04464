package idp_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
)

const everyProblem = `
tenant: ""
roles:
  viewer:
    clearance: secret
    verbs: [read, execute]
    compartments: [PII_Contact]
    tool_sets: [ok, "bad set"]
  Bad_Role:
    clearance: internal
  noclear:
    verbs: [read]
users:
  alice: {subject: "user:alice", roles: [viewer, ghost]}
  bob: {subject: "user:alice", roles: [noclear], kind: robot}
  carol: {roles: [Bad_Role]}
  Eve: {subject: "user:eve", roles: [Bad_Role]}
  shared: {subject: "user:shared", roles: [Bad_Role]}
agents:
  shared: {subject: "agent:shared", roles: [Bad_Role], may_act_for: [alice, zed]}
  idle: {subject: "agent:idle", roles: [Bad_Role]}
`

func TestPersonaValidationReportsEveryProblemAtOnce(t *testing.T) {
	_, err := idp.ParsePersonas([]byte(everyProblem))
	var perr *idp.PersonaError
	if !errors.As(err, &perr) {
		t.Fatalf("ParsePersonas: %v, want a *PersonaError", err)
	}
	want := []string{
		`tenant: missing`,
		`roles.Bad_Role: role name "Bad_Role" does not match ^[a-z][a-z0-9._-]{0,62}$`,
		`roles.viewer: clearance "secret" is not a clearance level`,
		`roles.viewer: verb "execute" is not READ, WRITE or DESTRUCTIVE`,
		`roles.viewer: compartment "PII_Contact" is not a valid name`,
		`roles.viewer: tool set "bad set" is not a valid name`,
		`users.Eve: handle "Eve" does not match ^[a-z][a-z0-9._-]{0,62}$`,
		`users.alice: unknown role "ghost"`,
		`users.bob: subject "user:alice" is already users.alice's`,
		`users.bob: no role gives a clearance`,
		`users.bob: kind "robot" is not USER, AGENT or SERVICE`,
		`users.carol: subject missing`,
		`agents.idle: may_act_for is empty (an agent is only ever issued acting for a user)`,
		`agents.shared: handle "shared" is also a user`,
		`agents.shared: may_act_for names unknown user "zed"`,
	}
	if !slices.Equal(perr.Problems, want) {
		t.Fatalf("problems:\n  %s\nwant:\n  %s", strings.Join(perr.Problems, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestNewValidatesPersonasBuiltInCode(t *testing.T) {
	p := &idp.Personas{
		Tenant: "acme",
		Roles:  map[string]idp.Role{"r": {Clearance: "internal"}},
		Users:  map[string]idp.User{"a": {Subject: "user:a", Roles: []string{"missing"}}},
	}
	var perr *idp.PersonaError
	if _, err := idp.New(p, idp.Options{}); !errors.As(err, &perr) {
		t.Fatalf("New with an unknown role: %v, want a *PersonaError", err)
	}
	if _, err := idp.New(nil, idp.Options{}); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

func TestSpellingsAreReadAsGarmdReadsThemAndServedPrefixed(t *testing.T) {
	cases := []struct {
		clearance, verb, kind string
		want                  idp.Role
		wantKind              string
	}{
		{"internal", "read", "", idp.Role{Clearance: "CLEARANCE_INTERNAL", Verbs: []string{"VERB_READ"}}, "PRINCIPAL_KIND_USER"},
		{"Restricted", "Write", "service", idp.Role{Clearance: "CLEARANCE_RESTRICTED", Verbs: []string{"VERB_WRITE"}}, "PRINCIPAL_KIND_SERVICE"},
		{"CLEARANCE_PUBLIC", "VERB_DESTRUCTIVE", "AGENT", idp.Role{Clearance: "CLEARANCE_PUBLIC", Verbs: []string{"VERB_DESTRUCTIVE"}}, "PRINCIPAL_KIND_AGENT"},
		{"clearance_confidential", "verb_read", "principal_kind_user", idp.Role{Clearance: "CLEARANCE_CONFIDENTIAL", Verbs: []string{"VERB_READ"}}, "PRINCIPAL_KIND_USER"},
	}
	for _, c := range cases {
		i, err := idp.New(personaWith(c.clearance, c.verb, c.kind), idp.Options{})
		if err != nil {
			t.Errorf("%s/%s/%s refused: %v", c.clearance, c.verb, c.kind, err)
			continue
		}
		got := i.Personas()
		if !reflect.DeepEqual(got.Roles["r"], c.want) || got.Users["u"].Kind != c.wantKind {
			t.Errorf("%s/%s/%s read as %+v kind %q, want %+v kind %q",
				c.clearance, c.verb, c.kind, got.Roles["r"], got.Users["u"].Kind, c.want, c.wantKind)
		}
	}

	refused := []struct{ clearance, verb, kind string }{
		{"unspecified", "read", ""},
		{"CLEARANCE_UNSPECIFIED", "read", ""},
		{"secret", "read", ""},
		{"CLEARANCE_CLEARANCE_INTERNAL", "read", ""},
		{"30", "read", ""},
		{" internal", "read", ""},
		{"internal", "VERB_UNSPECIFIED", ""},
		{"internal", "execute", ""},
		{"internal", "", ""},
		{"internal", "read", "unspecified"},
		{"internal", "read", "robot"},
	}
	for _, c := range refused {
		var perr *idp.PersonaError
		if _, err := idp.New(personaWith(c.clearance, c.verb, c.kind), idp.Options{}); !errors.As(err, &perr) {
			t.Errorf("clearance %q verb %q kind %q: %v, want a *PersonaError", c.clearance, c.verb, c.kind, err)
		}
	}
}

func personaWith(clearance, verb, kind string) *idp.Personas {
	return &idp.Personas{
		Tenant: "acme",
		Roles:  map[string]idp.Role{"r": {Clearance: clearance, Verbs: []string{verb}}},
		Users:  map[string]idp.User{"u": {Subject: "user:u", Roles: []string{"r"}, Kind: kind}},
	}
}

func TestAPersonaFileIsDecodedStrictly(t *testing.T) {
	cases := map[string]string{
		"an unknown key": "tenant: acme\nroles: {r: {clearance: internal}}\n" +
			"users: {u: {subject: 'user:u', roles: [r], clearance: internal}}\n",
		"a kind on an agent": "tenant: acme\nroles: {r: {clearance: internal}}\n" +
			"users: {u: {subject: 'user:u', roles: [r]}}\n" +
			"agents: {a: {subject: 'agent:a', roles: [r], may_act_for: [u], kind: AGENT}}\n",
		"a duplicate key":   "tenant: acme\ntenant: other\nroles: {r: {clearance: internal}}\nusers: {u: {subject: 'user:u', roles: [r]}}\n",
		"two documents":     "tenant: acme\nroles: {r: {clearance: internal}}\nusers: {u: {subject: 'user:u', roles: [r]}}\n---\ntenant: other\n",
		"an empty file":     "",
		"a list, not a map": "- tenant: acme\n",
	}
	for name, doc := range cases {
		if p, err := idp.ParsePersonas([]byte(doc)); err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		}
	}
}

func TestThePersonasEndpointServesTheFileAsJSONThatReadsBack(t *testing.T) {
	ctx := testContext(t)
	loaded := loadPersonas(t)
	i := newIdP(t, idp.Options{})
	srv := start(t, i)
	res := do(t, ctx, http.MethodGet, srv.URL()+idp.PersonasPath)
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /personas: %d %q %s", res.status, res.header.Get("Content-Type"), res.body)
	}

	var top map[string]json.RawMessage
	if err := json.Unmarshal(res.body, &top); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"agents", "roles", "tenant", "users"}) {
		t.Errorf("top-level keys %v", keys)
	}

	back, err := idp.ParsePersonas(res.body)
	if err != nil {
		t.Fatalf("served JSON does not read back as a persona file: %v\n%s", err, res.body)
	}
	if !reflect.DeepEqual(back, loaded) || !reflect.DeepEqual(back, i.Personas()) {
		t.Fatalf("round trip changed the personas:\nserved %s\nloaded %+v", res.body, loaded)
	}
	if got := back.Roles["contractor"]; got.Clearance != "CLEARANCE_CONFIDENTIAL" || !slices.Equal(got.Verbs, []string{"VERB_READ"}) {
		t.Errorf("contractor served as %+v, want canonical spellings", got)
	}
	if got := back.Agents["assistant"]; got.Subject != "agent:support-assistant" || !slices.Equal(got.MayActFor, []string{"support"}) {
		t.Errorf("assistant served as %+v", got)
	}
}

func TestPersonasReturnsACopy(t *testing.T) {
	i := newIdP(t, idp.Options{})
	p := i.Personas()
	p.Tenant = "changed"
	p.Roles["support-desk"].Compartments[0] = "changed"
	if again := i.Personas(); again.Tenant != "acme" || again.Roles["support-desk"].Compartments[0] != "pii-contact" {
		t.Fatalf("modifying Personas() changed the IdP: %+v", again)
	}
}
