package garmd_test

import (
	"net/http"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
)

// A garmd the dev plane runs as a process of its own (a cluster's replica)
// is served behind the dev plane's one guard: a page whose name rebinds to
// 127.0.0.1 reaches neither the tool plane nor the admin listener, and a
// browser's cross-origin post is refused before any call is made.
func TestALoopbackOnlyGarmdRefusesAForeignHostOnEveryListener(t *testing.T) {
	t.Parallel()
	s := startStack(t, func(c *garmd.Config) { c.LoopbackHostsOnly = true })
	token := s.token("support")
	send := func(method, url, host string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	listing := s.url + "/garm.v1.ToolCatalogService/ListTools"
	for name, resp := range map[string]*http.Response{
		"the tool plane, a rebound name":     send(http.MethodPost, listing, "attacker.example:7440"),
		"the admin listener, a rebound name": send(http.MethodGet, s.adminURL+"/readyz", "attacker.example"),
		"a cross-site post":                  send(http.MethodPost, listing, strings.TrimPrefix(s.url, "http://"), "Sec-Fetch-Site", "cross-site"),
	} {
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	if resp := send(http.MethodPost, listing, strings.TrimPrefix(s.url, "http://")); resp.StatusCode != http.StatusOK {
		t.Errorf("the tool plane, its loopback address: %d, want 200", resp.StatusCode)
	}
	if resp := send(http.MethodGet, s.adminURL+"/readyz", "localhost"); resp.StatusCode == http.StatusForbidden {
		t.Errorf("the admin listener, localhost: 403")
	}
}

// Without the flag garmd guards nothing itself: a deployment's listeners
// are guarded by what stands before them (decision 0087).
func TestAGarmdWithoutTheFlagAnswersAnyHost(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	req, err := http.NewRequest(http.MethodGet, s.adminURL+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "garm.internal.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusForbidden {
		t.Fatal("a garmd without --loopback-hosts-only refused a Host")
	}
}
