package devplane_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/devkit/devplane"
)

// The dev endpoint tells why a call was refused and lists every tool; an
// agent on the same machine that asks without the run's secret learns
// nothing, not even which tools exist.
func TestTheDevEndpointAnswersNoOneWithoutTheRunsSecret(t *testing.T) {
	t.Parallel()
	u := plane.URLs()
	call := send(t, http.MethodPost, u.Garmd+"/calc.v1.Calculator/Divide", "", `{"a": 1, "b": 0}`,
		"Authorization", "Bearer "+token(t, "outsider"), "Content-Type", "application/json")
	event := call.header.Get("Garm-Event-Id")
	if event == "" {
		t.Fatalf("the call has no event id: %d %s", call.status, call.body)
	}
	secret, err := devplane.ReadDevSecret(u.Dev, "")
	if err != nil {
		t.Fatal(err)
	}
	var refusals []string
	for name, headers := range map[string][]string{
		"no secret":              nil,
		"an empty secret":        {devplane.DevSecretHeader, ""},
		"a wrong secret":         {devplane.DevSecretHeader, strings.Repeat("0", len(secret))},
		"the secret, truncated":  {devplane.DevSecretHeader, secret[:len(secret)-1]},
		"the secret as a bearer": {"Authorization", "Bearer " + secret},
	} {
		for _, path := range []string{"/tools", "/ledger/" + event + "?wait=5s", "/nodes/2/stop"} {
			method := http.MethodGet
			if strings.HasPrefix(path, "/nodes") {
				method = http.MethodPost
			}
			a := send(t, method, u.Dev+path, "", "", headers...)
			if a.status != http.StatusUnauthorized || strings.Contains(a.body, "calc") || strings.Contains(a.body, event) {
				t.Errorf("%s, %s %s: %d %q", name, method, path, a.status, a.body)
			}
			refusals = append(refusals, a.body)
		}
	}
	for _, body := range refusals[1:] {
		if body != refusals[0] {
			t.Errorf("the refusals differ: %q and %q", refusals[0], body)
		}
	}

	tools := send(t, http.MethodGet, u.Dev+"/tools", "", "", devplane.DevSecretHeader, secret)
	var routes []devplane.Route
	if tools.status != http.StatusOK || json.Unmarshal([]byte(tools.body), &routes) != nil || len(routes) == 0 {
		t.Fatalf("/tools with the secret: %d %s", tools.status, tools.body)
	}
	row := send(t, http.MethodGet, u.Dev+"/ledger/"+event+"?wait=10s", "", "", devplane.DevSecretHeader, secret)
	if row.status != http.StatusOK || !strings.Contains(row.body, event) {
		t.Fatalf("/ledger with the secret: %d %s", row.status, row.body)
	}
	if cc := row.header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("a row is answered with Cache-Control %q", cc)
	}
}

// The secret is in a file only its owner reads, in a directory only its
// owner enters, where garm call looks for the plane at that address.
func TestTheRunsSecretIsInAFileOnlyItsOwnerReads(t *testing.T) {
	t.Parallel()
	u := plane.URLs()
	want, err := devplane.DevSecretFile(u.Dev)
	if err != nil {
		t.Fatal(err)
	}
	if u.DevSecretFile != want || !strings.HasPrefix(want, cacheDir+string(filepath.Separator)) {
		t.Fatalf("the secret is in %s; garm call looks in %s, under %s", u.DevSecretFile, want, cacheDir)
	}
	for path, mode := range map[string]os.FileMode{want: 0o600, filepath.Dir(want): 0o700 | os.ModeDir} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != mode {
			t.Errorf("%s has mode %s, want %s", path, info.Mode(), mode)
		}
	}
	secret, err := devplane.ReadDevSecret(u.Dev, "")
	if err != nil || len(secret) < 64 {
		t.Errorf("the secret read back: %q, %v", secret, err)
	}
}
