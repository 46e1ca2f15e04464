package idp_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/garm-dev/garm/devkit/idp"
	"golang.org/x/oauth2"
)

// A page whose name rebinds to 127.0.0.1 sends its own name as the Host; the server must not
// mint it a persona's token, nor show it anything else.
func TestAPageRebindingItsNameToTheServerGetsNoToken(t *testing.T) {
	ctx := testContext(t)
	srv := start(t, newIdP(t, idp.Options{}))
	for _, path := range []string{idp.TokenPath + "?user=analyst", idp.JWKSPath, idp.PersonasPath, idp.DiscoveryPath} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "rebound.example:" + strings.TrimPrefix(srv.URL(), "http://127.0.0.1:")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "eyJ") || strings.Contains(string(body), "rebound") {
			t.Errorf("GET %s as rebound.example: %d %q", path, resp.StatusCode, body)
		}
	}
	if res := do(t, ctx, http.MethodGet, srv.URL()+idp.TokenPath+"?user=analyst"); res.status != http.StatusOK {
		t.Errorf("GET /token at its loopback address: %d %s", res.status, res.body)
	}
}

// A page on another origin cannot post the persona picker: it would sign the developer in as a
// persona it chose, at a redirect it started.
func TestAPageOnAnotherOriginCannotPickAPersona(t *testing.T) {
	_, srv, cfg, _ := oidcFixture(t)
	u, err := url.Parse(cfg.AuthCodeURL("the-state", oidc.Nonce("the-nonce"), oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	if err != nil {
		t.Fatal(err)
	}
	form := u.Query()
	form.Set("persona", "analyst")
	for name, h := range map[string][2]string{
		"cross-site":     {"Sec-Fetch-Site", "cross-site"},
		"foreign origin": {"Origin", "https://evil.example"},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL()+idp.AuthorizePath, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set(h[0], h[1])
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Errorf("%s: %d, redirected to %q", name, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if to, status, body := pick(t, srv, u.String(), "analyst"); to == nil || to.Query().Get("code") == "" {
		t.Errorf("the picker's own post: %d %s", status, body)
	}
}
