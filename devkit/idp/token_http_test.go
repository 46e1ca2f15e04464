package idp_test

import (
	"errors"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/idp"
)

func TestTokenRequestsAreAnsweredWithTheRightStatus(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	cases := []struct {
		name   string
		query  string
		status int
	}{
		{"a user", "user=support", http.StatusOK},
		{"an agent for a user it lists", "user=support&as=assistant", http.StatusOK},
		{"a runner executing for a user", "user=reporter&exec=runner%3Areports", http.StatusOK},
		{"an agent for a user it does not list", "user=analyst&as=assistant", http.StatusForbidden},
		{"an unknown user", "user=mallory", http.StatusNotFound},
		{"an unknown agent", "user=support&as=mallory", http.StatusNotFound},
		{"an actor that is a user", "user=support&as=analyst", http.StatusBadRequest},
		{"an agent as the user", "user=assistant", http.StatusBadRequest},
		{"no user", "as=assistant", http.StatusBadRequest},
		{"no query at all", "", http.StatusBadRequest},
		{"an empty user", "user=", http.StatusBadRequest},
		{"an empty actor", "user=support&as=", http.StatusBadRequest},
		{"an empty runner", "user=support&exec=", http.StatusBadRequest},
		{"a runner with a control character", "user=support&exec=runner%0Aci", http.StatusBadRequest},
		{"a misspelt parameter", "user=support&agent=assistant", http.StatusBadRequest},
		{"a repeated parameter", "user=support&user=analyst", http.StatusBadRequest},
		{"a malformed query", "user=%zz", http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := do(t, ctx, http.MethodGet, srv.URL()+idp.TokenPath+"?"+c.query)
			if res.status != c.status {
				t.Fatalf("status %d, want %d: %s", res.status, c.status, res.body)
			}
			mediaType, _, err := mime.ParseMediaType(res.header.Get("Content-Type"))
			if err != nil || mediaType != "text/plain" {
				t.Errorf("Content-Type %q, want text/plain", res.header.Get("Content-Type"))
			}
			body := strings.TrimSuffix(string(res.body), "\n")
			if c.status == http.StatusOK {
				if strings.Count(body, ".") != 2 || strings.ContainsAny(body, " \r\n") {
					t.Errorf("body is not exactly a compact JWT: %q", res.body)
				}
				return
			}
			if body == "" || len(body) > 200 || strings.Contains(body, "\n") {
				t.Errorf("error body is not one short line: %q", res.body)
			}
		})
	}
}

func TestAnAgentMayActOnlyForTheUsersItLists(t *testing.T) {
	i := newIdP(t, idp.Options{})
	if _, err := i.Token("support", "assistant"); err != nil {
		t.Fatalf("assistant acting for support: %v", err)
	}
	for _, user := range []string{"analyst", "outsider", "reporter"} {
		token, err := i.Token(user, "assistant")
		if !errors.Is(err, idp.ErrMayNotActFor) || token != "" {
			t.Errorf("assistant acting for %s: token %q, err %v; want ErrMayNotActFor", user, token, err)
		}
	}
}

func TestTokenErrorsAreDistinguishableInCode(t *testing.T) {
	i := newIdP(t, idp.Options{})
	cases := []struct {
		user, as string
		want     error
	}{
		{"mallory", "", idp.ErrUnknownUser},
		{"support", "mallory", idp.ErrUnknownAgent},
		{"support", "analyst", idp.ErrNotAnAgent},
		{"assistant", "", idp.ErrNotAUser},
		{"analyst", "assistant", idp.ErrMayNotActFor},
	}
	for _, c := range cases {
		if _, err := i.Token(c.user, c.as); !errors.Is(err, c.want) {
			t.Errorf("Token(%q, %q) = %v, want %v", c.user, c.as, err, c.want)
		}
	}
}

func TestEveryPathRefusesMethodsItDoesNotServe(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	for _, path := range []string{idp.JWKSPath, idp.TokenPath + "?user=support", idp.PersonasPath} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			if method == http.MethodPost && path != idp.JWKSPath && path != idp.PersonasPath {
				continue // POST /token is the OpenID Connect code exchange (oidc_test.go)
			}
			res := do(t, ctx, method, srv.URL()+path)
			if res.status != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", method, path, res.status)
			}
			if mediaType, _, _ := mime.ParseMediaType(res.header.Get("Content-Type")); mediaType != "text/plain" {
				t.Errorf("%s %s: Content-Type %q", method, path, res.header.Get("Content-Type"))
			}
		}
	}
}

func TestATokenIsNeverCached(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	res := do(t, ctx, http.MethodGet, srv.URL()+idp.TokenPath+"?user=support")
	if got := res.header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
}
