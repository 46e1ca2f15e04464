package idp_test

import (
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
)

// claimsOf decodes a token's payload and takes out its jti, which must be present and non-empty,
// so the rest can be compared exactly.
func claimsOf(t *testing.T, token string) (claims map[string]any, jti string) {
	t.Helper()
	claims = segment(t, token, 1)
	jti, _ = claims["jti"].(string)
	if jti == "" {
		t.Fatalf("token has no jti: %v", claims)
	}
	delete(claims, "jti")
	return claims, jti
}

func registered(sub string) map[string]any {
	iat := fixedTime.Unix()
	return map[string]any{
		"iss": idp.DefaultIssuer, "sub": sub, "aud": idp.DefaultAudience,
		"iat": iat, "nbf": iat, "exp": iat + int64(idp.DefaultTokenTTL.Seconds()),
		"tenant": "acme",
	}
}

func with(base map[string]any, extra map[string]any) map[string]any {
	for k, v := range extra {
		base[k] = v
	}
	return base
}

func TestAUserTokenCarriesExactlyTheSpecifiedClaims(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	token, err := i.Token("support", "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := claimsOf(t, token)
	want := with(registered("user:sam@acme.example"), map[string]any{
		"garm": map[string]any{
			"clearance":    "CLEARANCE_INTERNAL",
			"compartments": []string{"pii-contact"},
			"verbs":        []string{"VERB_READ", "VERB_WRITE"},
			"kind":         "PRINCIPAL_KIND_USER",
		},
	})
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Fatalf("claims:\n%s\nwant:\n%s", g, w)
	}
}

func TestAnAgentActingForAUserCarriesItsOwnAuthorityInAct(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	token, err := i.Token("support", "assistant")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := claimsOf(t, token)
	want := with(registered("user:sam@acme.example"), map[string]any{
		"garm": map[string]any{
			"clearance":    "CLEARANCE_INTERNAL",
			"compartments": []string{"pii-contact"},
			"verbs":        []string{"VERB_READ", "VERB_WRITE"},
			"kind":         "PRINCIPAL_KIND_USER",
		},
		"act": map[string]any{
			"sub": "agent:support-assistant",
			"garm": map[string]any{
				"clearance":    "CLEARANCE_CONFIDENTIAL",
				"compartments": []string{"pii-contact"},
				"verbs":        []string{"VERB_READ", "VERB_WRITE"},
				"tool_sets":    []string{"support"},
				"kind":         "PRINCIPAL_KIND_AGENT",
			},
		},
	})
	if g, w := asJSON(t, got), asJSON(t, want); g != w {
		t.Fatalf("claims:\n%s\nwant:\n%s", g, w)
	}
}

func TestExecNamesTheRunnerAndTheIssuerOverHTTPAndInCode(t *testing.T) {
	ctx := testContext(t)
	i := newIdP(t, idp.Options{Now: fixedClock})
	srv := start(t, i)
	overHTTP := fetchToken(t, ctx, srv, "user=analyst&exec=runner:nightly-batch")
	inCode, err := i.TokenWithExec("analyst", "", "runner:nightly-batch")
	if err != nil {
		t.Fatal(err)
	}
	want := with(registered("user:ana@acme.example"), map[string]any{
		"garm": map[string]any{
			"clearance":    "CLEARANCE_RESTRICTED",
			"compartments": []string{"pii-contact", "pii-identity"},
			"verbs":        []string{"VERB_READ"},
			"kind":         "PRINCIPAL_KIND_USER",
		},
		"exec": map[string]any{"sub": "runner:nightly-batch", "iss": idp.DefaultIssuer},
	})
	for name, token := range map[string]string{"GET /token": overHTTP, "TokenWithExec": inCode} {
		got, _ := claimsOf(t, token)
		if g, w := asJSON(t, got), asJSON(t, want); g != w {
			t.Errorf("%s claims:\n%s\nwant:\n%s", name, g, w)
		}
	}
	if _, err := i.TokenWithExec("analyst", "", ""); err == nil {
		t.Error("TokenWithExec with an empty exec issued a token")
	}
}

func TestAScopedUserCarriesToolSetsAndAnUnscopedOneHasNoToolSetsClaim(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	reporter, err := i.Token("reporter", "")
	if err != nil {
		t.Fatal(err)
	}
	outsider, err := i.Token("outsider", "")
	if err != nil {
		t.Fatal(err)
	}
	scoped, _ := claimsOf(t, reporter)
	if g, w := asJSON(t, scoped["garm"]), asJSON(t, map[string]any{
		"clearance": "CLEARANCE_INTERNAL", "compartments": []string{}, "verbs": []string{"VERB_READ"},
		"tool_sets": []string{"dashboards", "reports"}, "kind": "PRINCIPAL_KIND_USER",
	}); g != w {
		t.Errorf("reporter's garm claim:\n%s\nwant:\n%s", g, w)
	}
	unscoped, _ := claimsOf(t, outsider)
	garm := unscoped["garm"].(map[string]any)
	if _, ok := garm["tool_sets"]; ok {
		t.Errorf("outsider's token has a tool_sets claim: %v", garm)
	}
	if g, w := asJSON(t, garm), asJSON(t, map[string]any{
		"clearance": "CLEARANCE_CONFIDENTIAL", "compartments": []string{}, "verbs": []string{"VERB_READ"},
		"kind": "PRINCIPAL_KIND_USER",
	}); g != w {
		t.Errorf("outsider's garm claim:\n%s\nwant:\n%s", g, w)
	}
}

func TestEveryTokenHasItsOwnJTI(t *testing.T) {
	i := newIdP(t, idp.Options{Now: fixedClock})
	seen := map[string]bool{}
	for range 20 {
		token, err := i.Token("support", "assistant")
		if err != nil {
			t.Fatal(err)
		}
		_, jti := claimsOf(t, token)
		if seen[jti] {
			t.Fatalf("jti %q issued twice", jti)
		}
		seen[jti] = true
	}
}

func TestIssuerAndAudienceComeFromTheOptions(t *testing.T) {
	i := newIdP(t, idp.Options{Issuer: "https://dev-idp.example.invalid/acme", Audience: "garm-staging"})
	if i.Issuer() != "https://dev-idp.example.invalid/acme" {
		t.Errorf("Issuer() = %q", i.Issuer())
	}
	token, err := i.TokenWithExec("support", "", "runner:ci")
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := claimsOf(t, token)
	if claims["iss"] != "https://dev-idp.example.invalid/acme" || claims["aud"] != "garm-staging" {
		t.Errorf("iss %v aud %v", claims["iss"], claims["aud"])
	}
	if exec := claims["exec"].(map[string]any); exec["iss"] != "https://dev-idp.example.invalid/acme" {
		t.Errorf("exec.iss = %v", exec["iss"])
	}
}
