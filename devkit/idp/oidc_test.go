package idp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/garm-dev/garm/devkit/idp"
	"golang.org/x/oauth2"
)

const (
	testClient   = "garm-approvals"
	testRedirect = "http://127.0.0.1:9/callback"
)

// noRedirects is a client that stops at the first redirect, so a test reads where it points.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// oidcFixture is a started IdP with the test client registered, and the oauth2 config a relying
// party would use against it.
func oidcFixture(t *testing.T) (*idp.IdP, *idp.Server, *oauth2.Config, *oidc.Provider) {
	t.Helper()
	i := newIdP(t, idp.Options{})
	srv := start(t, i)
	if err := i.RegisterClient(testClient, testRedirect); err != nil {
		t.Fatal(err)
	}
	// The dev IdP's issuer is a name that never resolves; discovery is fetched from the server.
	ctx := oidc.InsecureIssuerURLContext(testContext(t), i.Issuer())
	provider, err := oidc.NewProvider(ctx, srv.URL())
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	cfg := &oauth2.Config{ClientID: testClient, RedirectURL: testRedirect, Endpoint: provider.Endpoint(), Scopes: []string{oidc.ScopeOpenID}}
	return i, srv, cfg, provider
}

// pick posts the picker's form for persona with the authorization request's parameters,
// answering the redirect's URL (or the failing response's status and body).
func pick(t *testing.T, srv *idp.Server, authURL, persona string) (*url.URL, int, string) {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatal(err)
	}
	form := u.Query()
	form.Set("persona", persona)
	resp, err := noRedirects.PostForm(srv.URL()+idp.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusFound {
		return nil, resp.StatusCode, string(body)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return to, resp.StatusCode, ""
}

func TestAnApproverSignsInWithTheAuthorizationCodeAndPKCE(t *testing.T) {
	i, srv, cfg, provider := oidcFixture(t)
	ctx := testContext(t)
	verifier := oauth2.GenerateVerifier()
	authURL := cfg.AuthCodeURL("the-state", oidc.Nonce("the-nonce"), oauth2.S256ChallengeOption(verifier))

	page := do(t, ctx, http.MethodGet, authURL)
	if page.status != http.StatusOK || !strings.Contains(string(page.body), `value="analyst"`) {
		t.Fatalf("picker: %d %s", page.status, page.body)
	}
	if strings.Contains(string(page.body), "assistant") {
		t.Fatal("the picker offers an agent; only user personas sign in")
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("picker CSP: %q", csp)
	}

	to, status, body := pick(t, srv, authURL, "analyst")
	if to == nil {
		t.Fatalf("pick: %d %s", status, body)
	}
	if got := to.Scheme + "://" + to.Host + to.Path; got != testRedirect || to.Query().Get("state") != "the-state" {
		t.Fatalf("redirected to %s", to)
	}
	tok, err := cfg.Exchange(ctx, to.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: testClient}).Verify(oidc.InsecureIssuerURLContext(ctx, i.Issuer()), raw)
	if err != nil {
		t.Fatalf("the ID token does not verify: %v", err)
	}
	var claims struct {
		Nonce  string `json:"nonce"`
		Tenant string `json:"tenant"`
		Garm   struct {
			Clearance    string   `json:"clearance"`
			Compartments []string `json:"compartments"`
		} `json:"garm"`
	}
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if idt.Subject != "user:ana@acme.example" || claims.Nonce != "the-nonce" || claims.Tenant != "acme" ||
		claims.Garm.Clearance != "CLEARANCE_RESTRICTED" || strings.Join(claims.Garm.Compartments, ",") != "pii-contact,pii-identity" {
		t.Fatalf("ID token: sub %q claims %+v", idt.Subject, claims)
	}
}

// codeFor runs the picker for analyst and answers the code.
func codeFor(t *testing.T, srv *idp.Server, cfg *oauth2.Config, verifier string) string {
	t.Helper()
	to, status, body := pick(t, srv, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "analyst")
	if to == nil {
		t.Fatalf("pick: %d %s", status, body)
	}
	return to.Query().Get("code")
}

// exchangeRaw posts the token request by hand, answering the status and the OAuth error code.
func exchangeRaw(t *testing.T, srv *idp.Server, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(srv.URL()+idp.OIDCTokenPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error
}

func TestACodeIsSpentOnceAndOnlyWithItsClientRedirectAndVerifier(t *testing.T) {
	_, srv, cfg, _ := oidcFixture(t)
	verifier := oauth2.GenerateVerifier()
	form := func(code string, edit func(url.Values)) url.Values {
		f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {testClient},
			"redirect_uri": {testRedirect}, "code_verifier": {verifier}}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for name, edit := range map[string]func(url.Values){
		"a wrong verifier":     func(f url.Values) { f.Set("code_verifier", oauth2.GenerateVerifier()) },
		"no verifier":          func(f url.Values) { f.Del("code_verifier") },
		"another redirect URI": func(f url.Values) { f.Set("redirect_uri", testRedirect+"/other") },
		"another client":       func(f url.Values) { f.Set("client_id", "someone-else") },
	} {
		t.Run(name, func(t *testing.T) {
			code := codeFor(t, srv, cfg, verifier)
			if status, e := exchangeRaw(t, srv, form(code, edit)); status != http.StatusBadRequest || e != "invalid_grant" {
				t.Fatalf("got %d %q; want 400 invalid_grant", status, e)
			}
			// A code presented wrongly is burnt: the right presentation after it fails too.
			if status, _ := exchangeRaw(t, srv, form(code, nil)); status != http.StatusBadRequest {
				t.Fatalf("the code still worked after a wrong presentation: %d", status)
			}
		})
	}
	t.Run("an unknown code", func(t *testing.T) {
		if status, e := exchangeRaw(t, srv, form(oauth2.GenerateVerifier(), nil)); status != http.StatusBadRequest || e != "invalid_grant" {
			t.Fatalf("got %d %q; want 400 invalid_grant", status, e)
		}
	})
	t.Run("a reused code", func(t *testing.T) {
		code := codeFor(t, srv, cfg, verifier)
		if status, e := exchangeRaw(t, srv, form(code, nil)); status != http.StatusOK {
			t.Fatalf("first exchange: %d %q", status, e)
		}
		if status, e := exchangeRaw(t, srv, form(code, nil)); status != http.StatusBadRequest || e != "invalid_grant" {
			t.Fatalf("second exchange: %d %q; want 400 invalid_grant", status, e)
		}
	})
}

func TestAnAuthorizationRequestOutsideTheRulesIsRefusedAndNeverRedirected(t *testing.T) {
	_, srv, cfg, _ := oidcFixture(t)
	ctx := testContext(t)
	verifier := oauth2.GenerateVerifier()
	good := cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier))
	edit := func(change func(url.Values)) string {
		u, _ := url.Parse(good)
		q := u.Query()
		change(q)
		u.RawQuery = q.Encode()
		return u.String()
	}
	for name, u := range map[string]string{
		"plain PKCE":                       edit(func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) }),
		"no PKCE":                          edit(func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }),
		"an unregistered redirect URI":     edit(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:9/callback2") }),
		"a redirect URI differing in case": edit(func(q url.Values) { q.Set("redirect_uri", strings.ToUpper(testRedirect[:4])+testRedirect[4:]) }),
		"an unknown client":                edit(func(q url.Values) { q.Set("client_id", "mallory") }),
		"no state":                         edit(func(q url.Values) { q.Del("state") }),
		"no openid scope":                  edit(func(q url.Values) { q.Set("scope", "profile") }),
		"the implicit flow":                edit(func(q url.Values) { q.Set("response_type", "token") }),
	} {
		t.Run(name, func(t *testing.T) {
			if r := do(t, ctx, http.MethodGet, u); r.status != http.StatusBadRequest {
				t.Fatalf("GET: %d %s; want 400", r.status, r.body)
			}
			if to, status, _ := pick(t, srv, u, "analyst"); to != nil || status != http.StatusBadRequest {
				t.Fatalf("POST: redirected to %v (%d); want 400", to, status)
			}
		})
	}
	t.Run("an agent persona", func(t *testing.T) {
		if to, status, _ := pick(t, srv, good, "assistant"); to != nil || status != http.StatusBadRequest {
			t.Fatalf("an agent signed in: %v (%d)", to, status)
		}
	})
}
