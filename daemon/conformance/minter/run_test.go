package minter_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/conformance/minter"
)

// These tests need no minter: they pin what the kit refuses before it
// sends anything.

const oneCase = `
suite: s
version: 1
shape: get
token: {issuer: "https://idp.example", jwks: "{endpoint}/jwks", audience: garm}
cases:
  - {name: a refusal, kind: token-refused, mint: {user: nobody}}
`

func TestARunWithNothingToCheckRefusesToStart(t *testing.T) {
	t.Parallel()
	suite, err := minter.ParseSuite([]byte(oneCase))
	if err != nil {
		t.Fatal(err)
	}
	driver := &minter.GetDriver{Endpoint: "http://127.0.0.1:9"}
	for name, cfg := range map[string]minter.Config{
		"no suite":              {Endpoint: "http://127.0.0.1:9", Driver: driver},
		"a suite without cases": {Suite: &minter.Suite{Name: "s", Version: 1, Shape: minter.ShapeGet}, Endpoint: "http://127.0.0.1:9", Driver: driver},
		"no endpoint":           {Suite: suite, Driver: driver},
		"no driver":             {Suite: suite, Endpoint: "http://127.0.0.1:9"},
	} {
		var out strings.Builder
		cfg.Out = &out
		rep, err := minter.Run(context.Background(), cfg)
		if !errors.Is(err, minter.ErrNothingToCheck) {
			t.Errorf("%s: Run answered %v, want ErrNothingToCheck", name, err)
		}
		if rep.OK() || out.Len() > 0 {
			t.Errorf("%s: the refused run reported ok=%v and printed %q", name, rep.OK(), out.String())
		}
	}
}

func TestAnEmptyReportIsNotOK(t *testing.T) {
	t.Parallel()
	if (minter.Report{}).OK() {
		t.Fatal("a report of no cases is ok")
	}
}

func TestASuiteWithAProblemIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ suite, want string }{
		"no cases":        {"suite: s\nversion: 1\nshape: get\ncases: []\n", "no cases"},
		"an unknown key":  {strings.Replace(oneCase, "shape: get", "shape: get\nstrict: false", 1), "strict"},
		"an unknown kind": {strings.Replace(oneCase, "token-refused", "token-maybe", 1), `kind "token-maybe"`},
		"another version": {strings.Replace(oneCase, "version: 1", "version: 2", 1), "version 2"},
		"a grant case of a token endpoint": {
			strings.Replace(strings.Replace(oneCase, "shape: get", "shape: form-post", 1), "token-refused", "grant-refused", 1),
			"mints tokens, not grants"},
		"a token case without claims":             {strings.Replace(oneCase, "kind: token-refused", "kind: token", 1), "needs claims"},
		"a refusal status that is not 4xx":        {strings.Replace(oneCase, "mint: {user: nobody}", "mint: {user: nobody}, status: 200", 1), "status 200"},
		"client authentication outside form-post": {strings.Replace(oneCase, "mint: {user: nobody}", "mint: {user: nobody}, client_auth: none", 1), "client_auth belongs"},
		"a grant without the policy garmd requires": {`
suite: s
version: 1
shape: get
grant: {issuer: "https://idp.example", jwks: "{endpoint}/jwks", audience: garm}
cases:
  - {name: g, kind: grant, mint: {}, for: {tool: t.v1.x, subject: "user:a", material: {a.b: "1"}}}
`, "max_grant_age_seconds and approver_min_clearance"},
	} {
		_, err := minter.ParseSuite([]byte(tc.suite))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParseSuite answered %v, want an error naming %q", name, err, tc.want)
		}
	}
}

func TestTheShippedSuitesLoad(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	loaded := 0
	for _, f := range files {
		if strings.HasSuffix(f, "-personas.yaml") {
			continue
		}
		s, err := minter.LoadSuite(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		loaded++
		kinds := map[string]int{}
		for _, c := range s.Cases {
			kinds[c.Kind]++
		}
		t.Logf("%s: %d cases %v", s.Name, len(s.Cases), kinds)
	}
	if loaded != 3 {
		t.Fatalf("loaded %d shipped suites, want 3", loaded)
	}
	if _, err := os.Stat(filepath.Join("testdata", "devidp-personas.yaml")); err != nil {
		t.Fatal(err)
	}
}
