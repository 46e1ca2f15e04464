package devplane_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/devplane"
)

// listener is one of the plane's listeners and a request that reads from
// it what a page must not.
type listener struct {
	name, method, url, body string
	headers                 []string
}

func listeners(t *testing.T) []listener {
	t.Helper()
	u := plane.URLs()
	secret, err := devplane.ReadDevSecret(u.Dev, "")
	if err != nil {
		t.Fatal(err)
	}
	bearer := "Bearer " + token(t, "support")
	return []listener{
		{name: "the dev IdP's tokens", method: http.MethodGet, url: u.IdP + "/token?user=support"},
		{name: "the dev IdP's personas", method: http.MethodGet, url: u.IdP + "/personas"},
		{name: "the approvals inbox", method: http.MethodGet, url: u.Approvals + "/"},
		{name: "the approvals key set", method: http.MethodGet, url: u.Approvals + "/.well-known/jwks.json"},
		{name: "the dev endpoint's tools", method: http.MethodGet, url: u.Dev + "/tools", headers: []string{devplane.DevSecretHeader, secret}},
		{name: "garmd's listing", method: http.MethodPost, url: u.Garmd + devplane.ListToolsRoute, body: "{}",
			headers: []string{"Authorization", bearer, "Content-Type", "application/json"}},
		{name: "garmd's tool", method: http.MethodPost, url: u.Garmd + "/calc.v1.Calculator/Add", body: `{"a": 1, "b": 2}`,
			headers: []string{"Authorization", bearer, "Content-Type", "application/json"}},
		{name: "garmd's metrics", method: http.MethodGet, url: u.Admin + "/metrics"},
		{name: "garmd's readiness", method: http.MethodGet, url: u.Admin + "/readyz"},
	}
}

// A page whose name rebinds to 127.0.0.1 sends its own name as the Host:
// every listener of the plane refuses it, and answers it as it is
// addressed, at its loopback name.
func TestNoListenerOfThePlaneAnswersAPageThatRebindsItsName(t *testing.T) {
	t.Parallel()
	for _, l := range listeners(t) {
		u, err := url.Parse(l.url)
		if err != nil {
			t.Fatal(err)
		}
		rebound := "rebound.example:" + u.Port()
		// As the rebound page's browser sends it: same-origin, to itself.
		headers := append([]string{"Sec-Fetch-Site", "same-origin", "Origin", "http://" + rebound}, l.headers...)
		if a := send(t, l.method, l.url, rebound, l.body, headers...); a.status != http.StatusForbidden || strings.Contains(a.body, "rebound") {
			t.Errorf("%s at Host %s: %d %q", l.name, rebound, a.status, a.body)
		}
		for _, host := range []string{"localhost:" + u.Port(), "[::1]:" + u.Port(), ""} {
			if a := send(t, l.method, l.url, host, l.body, l.headers...); a.status == http.StatusForbidden || a.status >= 500 {
				t.Errorf("%s at Host %q: %d %q", l.name, host, a.status, a.body)
			}
		}
	}
}

// A page on another origin cannot read answers, but it can post a form:
// no state-changing route of the plane accepts one.
func TestNoListenerOfThePlaneTakesAChangeFromAnotherOrigin(t *testing.T) {
	t.Parallel()
	u := plane.URLs()
	bearer := "Bearer " + token(t, "support")
	routes := []listener{
		{name: "the dev IdP's grants", method: http.MethodPost, url: u.IdP + "/grant",
			body: `{"approver": "approver", "tool": "calc.v1.add", "subject": "support"}`, headers: []string{"Content-Type", "application/json"}},
		{name: "the approvals service's sign-out", method: http.MethodPost, url: u.Approvals + "/logout", body: "csrf=x",
			headers: []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{name: "garmd's tool", method: http.MethodPost, url: u.Garmd + "/calc.v1.Calculator/Add", body: `{"a": 1, "b": 2}`,
			headers: []string{"Authorization", bearer, "Content-Type", "application/json"}},
	}
	for _, r := range routes {
		for name, h := range map[string][]string{
			"cross-site":     {"Sec-Fetch-Site", "cross-site"},
			"foreign origin": {"Origin", "https://evil.example"},
		} {
			// The guard's own refusal: the approvals service would refuse a
			// sign-out without its CSRF token too, but not say this.
			if a := send(t, r.method, r.url, "", r.body, append(h, r.headers...)...); a.status != http.StatusForbidden || !strings.Contains(a.body, "another origin") || strings.Contains(a.body, "evil") {
				t.Errorf("%s, %s: %d %q", r.name, name, a.status, a.body)
			}
		}
	}
	// A program on the machine sends no Origin, and is served.
	if a := send(t, routes[0].method, routes[0].url, "", routes[0].body, routes[0].headers...); a.status != http.StatusOK {
		t.Errorf("%s from a program: %d %q", routes[0].name, a.status, a.body)
	}
}
