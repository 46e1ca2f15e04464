package idp_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/wire"
)

// paymentTexts are the reference material of design 7.9.
var paymentTexts = map[string]string{
	"amount_minor_units": "125000",
	"beneficiary_iban":   "GB29NWBK60161331926819",
	"currency_code":      "GBP",
}

const paymentTool = "payments.v1.initiate_payment"

func paymentGrant() idp.GrantRequest {
	return idp.GrantRequest{
		Approver: "analyst", Tool: paymentTool, Subject: "user:sam@acme.example",
		Task: "TASK-42", Material: paymentTexts,
	}
}

// grantClaimsOf decodes a grant's payload and takes out its jti, which must be 128 bits in hex.
func grantClaimsOf(t *testing.T, grant string) (claims map[string]any, jti string) {
	t.Helper()
	claims, jti = claimsOf(t, grant)
	if raw, err := hex.DecodeString(jti); err != nil || len(raw) != 16 || strings.ToLower(jti) != jti {
		t.Fatalf("jti %q is not 128 bits of lowercase hex", jti)
	}
	return claims, jti
}

func TestAGrantCarriesExactlyTheSpecifiedClaims(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	grant, err := i.Grant(paymentGrant())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := grantClaimsOf(t, grant)
	iat := fixedTime.Unix()
	want := map[string]any{
		"iss": idp.DefaultIssuer, "aud": idp.DefaultAudience,
		"iat": iat, "exp": iat + int64(idp.DefaultGrantTTL.Seconds()),
		"garm_grant": map[string]any{
			"tool":                  paymentTool,
			"subject":               "user:sam@acme.example",
			"task":                  "TASK-42",
			"material":              wire.MaterialDigest(paymentTexts),
			"approver":              "user:ana@acme.example",
			"approver_clearance":    "CLEARANCE_RESTRICTED",
			"approver_compartments": []string{"pii-contact", "pii-identity"},
		},
	}
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Fatalf("claims:\n%s\nwant:\n%s", g, w)
	}
	if _, ok := got["act"]; ok {
		t.Error("a grant carries act")
	}
	// The IdP's digest is design 7.9's, not merely the helper's.
	const reference = "sha256:050767261c6a70af99c68e72344389981e728a40661ace42936a6d3d00ac9f71"
	if material := got["garm_grant"].(map[string]any)["material"]; material != reference {
		t.Errorf("material %v, want the reference %s", material, reference)
	}
}

func TestAGrantWithoutTaskOrMaterialOmitsThemAndStillListsCompartments(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	grant, err := i.Grant(idp.GrantRequest{Approver: "reporter", Tool: "reports.v1.export", Subject: "user:olly@contractor.example"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := grantClaimsOf(t, grant)
	want := map[string]any{
		"tool":                  "reports.v1.export",
		"subject":               "user:olly@contractor.example",
		"approver":              "user:rita@acme.example",
		"approver_clearance":    "CLEARANCE_INTERNAL",
		"approver_compartments": []string{},
	}
	if g, w := asJSON(t, got["garm_grant"]), asJSON(t, want); g != w {
		t.Fatalf("garm_grant:\n%s\nwant:\n%s", g, w)
	}
	// An empty (not nil) material map is no material too.
	grant, err = i.Grant(idp.GrantRequest{Approver: "reporter", Tool: "reports.v1.export", Subject: "s", Material: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := grantClaimsOf(t, grant); got["garm_grant"].(map[string]any)["material"] != nil {
		t.Errorf("an empty material map gave a material claim: %v", got["garm_grant"])
	}
}

func TestAGrantForAnAbsentFieldBindsItsAbsence(t *testing.T) {
	i := newIdP(t, idp.Options{})
	grant, err := i.Grant(idp.GrantRequest{
		Approver: "analyst", Tool: paymentTool, Subject: "user:sam@acme.example",
		Material: map[string]string{"reference": wire.Unset, "amount_minor_units": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := grantClaimsOf(t, grant)
	want := wire.MaterialDigest(map[string]string{"reference": wire.Unset, "amount_minor_units": "1"})
	if material := got["garm_grant"].(map[string]any)["material"]; material != want {
		t.Errorf("material %v, want %s", material, want)
	}
}

func TestAGrantVerifiesAgainstTheServedKeySetAndExpiresAtItsTTL(t *testing.T) {
	ctx := testContext(t)
	const ttl = 2 * time.Minute
	i := newIdP(t, idp.Options{Now: fixedClock, GrantTTL: ttl, GrantAudience: "garm-grants"})
	srv := start(t, i)
	grant, err := i.Grant(paymentGrant())
	if err != nil {
		t.Fatal(err)
	}
	at := func(when time.Time) jwt.ParseOption {
		return jwt.WithClock(jwt.ClockFunc(func() time.Time { return when }))
	}
	noSkew := jwt.WithAcceptableSkew(0)
	if _, err := verify(t, ctx, srv, i, grant, at(fixedTime), noSkew); err == nil {
		t.Error("a grant verified for the token audience")
	}
	parsed, err := verifyGrant(t, ctx, srv, i, grant, at(fixedTime), noSkew)
	if err != nil {
		t.Fatalf("the grant does not verify against the served key set: %v", err)
	}
	var claim map[string]any
	if err := parsed.Get("garm_grant", &claim); err != nil || claim["tool"] != paymentTool {
		t.Errorf("verified garm_grant %v, %v", claim, err)
	}
	if _, err := verifyGrant(t, ctx, srv, i, grant, at(fixedTime.Add(ttl-time.Second)), noSkew); err != nil {
		t.Errorf("a second before the TTL: %v", err)
	}
	if _, err := verifyGrant(t, ctx, srv, i, grant, at(fixedTime.Add(ttl+time.Second)), noSkew); !errors.Is(err, jwt.TokenExpiredError()) {
		t.Errorf("a second after the TTL: %v, want expired", err)
	}
	header := segment(t, grant, 0)
	if header["alg"] != "ES256" || header["typ"] != "JWT" || header["kid"] == "" {
		t.Errorf("grant header %v", header)
	}
}

// verifyGrant checks a grant's signature against the key set served over HTTP, its iss, and
// that its aud is the grant audience.
func verifyGrant(t *testing.T, ctx context.Context, srv *idp.Server, i *idp.IdP, grant string, opts ...jwt.ParseOption) (jwt.Token, error) {
	t.Helper()
	set, err := jwk.Fetch(ctx, srv.JWKSURL())
	if err != nil {
		t.Fatalf("fetch JWKS: %v", err)
	}
	opts = append([]jwt.ParseOption{
		jwt.WithKeySet(set), jwt.WithIssuer(i.Issuer()), jwt.WithAudience(i.GrantAudience()),
	}, opts...)
	return jwt.ParseString(grant, opts...)
}

func TestTheGrantAudienceDefaultsToTheTokenAudience(t *testing.T) {
	i := newIdP(t, idp.Options{Audience: "garm-staging"})
	if i.GrantAudience() != "garm-staging" {
		t.Errorf("GrantAudience() = %q, want the token audience", i.GrantAudience())
	}
	grant, err := i.Grant(paymentGrant())
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := grantClaimsOf(t, grant); got["aud"] != "garm-staging" {
		t.Errorf("aud %v", got["aud"])
	}
	p := loadPersonas(t)
	for name, o := range map[string]idp.Options{
		"a negative grant TTL":   {GrantTTL: -time.Minute},
		"a sub-second grant TTL": {GrantTTL: 999 * time.Millisecond},
	} {
		if _, err := idp.New(p, o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestOnlyAUserPersonaApproves(t *testing.T) {
	p, err := idp.ParsePersonas([]byte(`
tenant: acme
roles:
  ops: {clearance: restricted, verbs: [read]}
users:
  alice: {subject: "user:alice@acme.example", roles: [ops]}
  batch: {subject: "svc:batch", roles: [ops], kind: service}
  bot: {subject: "user:bot@acme.example", roles: [ops], kind: agent}
agents:
  helper: {subject: "agent:helper", roles: [ops], may_act_for: [alice]}
`))
	if err != nil {
		t.Fatal(err)
	}
	i, err := idp.New(p, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	request := func(approver string) idp.GrantRequest {
		return idp.GrantRequest{Approver: approver, Tool: paymentTool, Subject: "user:alice@acme.example"}
	}
	if _, err := i.Grant(request("alice")); err != nil {
		t.Fatalf("a user approving: %v", err)
	}
	for approver, want := range map[string]error{
		"helper":  idp.ErrNotAUser,       // an agent
		"batch":   idp.ErrNotAUser,       // a user persona of kind SERVICE
		"bot":     idp.ErrNotAUser,       // a user persona of kind AGENT
		"mallory": idp.ErrUnknownUser,    // nobody
		"":        idp.ErrInvalidRequest, // missing
	} {
		grant, err := i.Grant(request(approver))
		if !errors.Is(err, want) || grant != "" {
			t.Errorf("approver %q: grant %q, err %v; want %v", approver, grant, err, want)
		}
	}
}

func TestAGrantNeedsAPrintableToolAndSubject(t *testing.T) {
	i := newIdP(t, idp.Options{})
	for name, edit := range map[string]func(*idp.GrantRequest){
		"no tool":                   func(r *idp.GrantRequest) { r.Tool = "" },
		"no subject":                func(r *idp.GrantRequest) { r.Subject = "" },
		"a tool with a newline":     func(r *idp.GrantRequest) { r.Tool = paymentTool + "\n" },
		"a subject with a NUL":      func(r *idp.GrantRequest) { r.Subject = "user:sam\x00" },
		"a task with a tab":         func(r *idp.GrantRequest) { r.Task = "TASK\t42" },
		"an empty material path":    func(r *idp.GrantRequest) { r.Material = map[string]string{"": "1"} },
		"a material path with =":    func(r *idp.GrantRequest) { r.Material = map[string]string{"a=b": "1"} },
		"a material path with ..":   func(r *idp.GrantRequest) { r.Material = map[string]string{"beneficiary..iban": "1"} },
		"a material path ending .":  func(r *idp.GrantRequest) { r.Material = map[string]string{"beneficiary.": "1"} },
		"a material path with a sp": func(r *idp.GrantRequest) { r.Material = map[string]string{"amount minor": "1"} },
	} {
		r := paymentGrant()
		edit(&r)
		grant, err := i.Grant(r)
		if !errors.Is(err, idp.ErrInvalidRequest) || grant != "" {
			t.Errorf("%s: grant %q, err %v; want ErrInvalidRequest", name, grant, err)
		}
	}
}

func TestEveryGrantHasItsOwnJTI(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	seen := map[string]bool{}
	for range 20 {
		grant, err := i.Grant(paymentGrant())
		if err != nil {
			t.Fatal(err)
		}
		_, jti := grantClaimsOf(t, grant)
		if seen[jti] {
			t.Fatalf("jti %q issued twice", jti)
		}
		seen[jti] = true
	}
}
