package loopback_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/garm-dev/garm/internal/loopback"
)

func TestOnlyLoopbackHostsAreAllowed(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"127.0.0.1": true, "127.0.0.1:7450": true, "127.9.8.7:1": true, "[::1]:7450": true, "[::1]": true,
		"::1": true, "localhost": true, "localhost:7442": true, "LocalHost:7442": true,
		"": false, ":7450": false, "evil.example": false, "evil.example:7450": false,
		"127.0.0.1.nip.io:7450": false, "localhost.evil.example": false, "localhost.": false,
		"0.0.0.0:7450": false, "[::]:7450": false, "10.0.0.1:7450": false, "0x7f000001:7450": false,
		"2130706433": false, "[::ffff:10.0.0.1]:7450": false,
	}
	for host, want := range cases {
		if got := loopback.HostAllowed(host); got != want {
			t.Errorf("HostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// served answers what the guard let through and what it answered.
func served(t *testing.T, r *http.Request) (reached bool, status int, body string) {
	t.Helper()
	h := loopback.Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached = true
		_, _ = io.WriteString(w, "served")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return reached, rec.Code, rec.Body.String()
}

func TestAPageThatRebindsItsNameToLoopbackIsRefused(t *testing.T) {
	t.Parallel()
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodHead, http.MethodOptions} {
		r := httptest.NewRequest(method, "http://evil.example:7450/token?user=alice", nil)
		// The rebound page is same-origin with itself: the browser says so.
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("Origin", "http://evil.example:7450")
		reached, status, body := served(t, r)
		if reached || status != http.StatusForbidden || strings.Contains(body, "evil") {
			t.Errorf("%s with Host evil.example: reached=%v %d %q", method, reached, status, body)
		}
	}
}

func TestACrossOriginChangeIsRefusedOnLoopback(t *testing.T) {
	t.Parallel()
	for name, h := range map[string][2]string{
		"cross-site":              {"Sec-Fetch-Site", "cross-site"},
		"same-site, another port": {"Sec-Fetch-Site", "same-site"},
		"foreign origin":          {"Origin", "https://evil.example"},
		"opaque origin":           {"Origin", "null"},
		"another loopback port":   {"Origin", "http://127.0.0.1:9999"},
	} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			r := httptest.NewRequest(method, "http://127.0.0.1:7442/nodes/2/stop", strings.NewReader("user=alice"))
			r.Header.Set(h[0], h[1])
			reached, status, body := served(t, r)
			if reached || status != http.StatusForbidden || strings.Contains(body, "evil") {
				t.Errorf("%s %s: reached=%v %d %q", name, method, reached, status, body)
			}
		}
	}
}

func TestWhatAProgramOrThePlanesOwnPagesSendIsServed(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*http.Request{
		"a read from a cross-site page (it cannot read the answer)": withHeader(httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7450/.well-known/jwks.json", nil), "Sec-Fetch-Site", "cross-site"),
		"a program's post, with no Origin":                          httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7450/grant", nil),
		"a page's post to its own origin":                           withHeader(httptest.NewRequest(http.MethodPost, "http://localhost:7450/authorize", nil), "Sec-Fetch-Site", "same-origin"),
		"an older browser's post naming its own origin":             withHeader(httptest.NewRequest(http.MethodPost, "http://[::1]:7451/logout", nil), "Origin", "http://[::1]:7451"),
		"a post the user typed or bookmarked":                       withHeader(httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7451/logout", nil), "Sec-Fetch-Site", "none"),
	} {
		if reached, status, body := served(t, r); !reached || status != http.StatusOK || body != "served" {
			t.Errorf("%s: reached=%v %d %q", name, reached, status, body)
		}
	}
}

func withHeader(r *http.Request, k, v string) *http.Request {
	r.Header.Set(k, v)
	return r
}
