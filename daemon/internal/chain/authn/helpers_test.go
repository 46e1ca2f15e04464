package authn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

const (
	issuerA  = "https://idp-a.example"
	issuerB  = "https://idp-b.example"
	audience = "garm.example"
	// bound is the most any one call of a test may take: it bounds the
	// test, it measures nothing.
	bound = 30 * time.Second
)

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// taxonomy is a catalogue generation's compartments, numbered in sorted
// order, as the real generation numbers them, and its attributes.
type taxonomy struct {
	declared []string
	attrs    map[string]*toolv1.Attribute
}

func (tx *taxonomy) DeclaredAttribute(name string) *toolv1.Attribute { return tx.attrs[name] }

func (tx *taxonomy) PrincipalView(*call.Principal) *celrule.View { return nil }

func newTaxonomy(names ...string) *taxonomy {
	s := slices.Clone(names)
	slices.Sort(s)
	return &taxonomy{declared: s}
}

func (tx *taxonomy) CompartmentSet(names []string) (set call.Compartments, kept, dropped []string) {
	for _, n := range names {
		if i, ok := slices.BinarySearch(tx.declared, n); ok {
			set |= 1 << i
			kept = append(kept, n)
		} else {
			dropped = append(dropped, n)
		}
	}
	return set, kept, dropped
}

// fixture is two issuers with their own keys and JWKS endpoints, and an
// Authenticator trusting both, on a clock the test moves.
type fixture struct {
	clock  *keysettest.Clock
	keyA   *keysettest.Key
	keyB   *keysettest.Key
	jwksA  *keysettest.Server
	jwksB  *keysettest.Server
	auth   *Authenticator
	tax    *taxonomy
	logged *bytes.Buffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, keysettest.NewKey(t, "ES256", "a-1"), func(*Config) {})
}

func newFixtureWith(t *testing.T, keyA *keysettest.Key, adjust func(*Config)) *fixture {
	t.Helper()
	f := &fixture{
		clock:  keysettest.NewClock(epoch),
		keyA:   keyA,
		keyB:   keysettest.NewKey(t, "ES256", "b-1"),
		tax:    newTaxonomy("finance", "hr", "legal"),
		logged: &bytes.Buffer{},
	}
	f.jwksA = keysettest.NewServer(t, f.keyA)
	f.jwksB = keysettest.NewServer(t, f.keyB)
	cfg := Config{
		Issuers:  []Issuer{{Name: issuerA, JWKSURL: f.jwksA.URL}, {Name: issuerB, JWKSURL: f.jwksB.URL}},
		Audience: audience,
		Now:      f.clock.Now,
		Logger:   slog.New(slog.NewTextHandler(f.logged, nil)),
	}
	adjust(&cfg)
	auth, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.auth = auth
	return f
}

// claims is a good claim set for issuer A: a user with INTERNAL clearance,
// the finance compartment and the READ verb, valid for an hour.
func (f *fixture) claims() map[string]any {
	now := f.clock.Now().Unix()
	return map[string]any{
		"iss": issuerA, "aud": audience, "sub": "alice", "jti": "t-1", "tenant": "acme",
		"iat": now, "exp": now + 3600,
		"garm": map[string]any{
			"clearance": "INTERNAL", "compartments": []string{"finance"}, "verbs": []string{"READ"}, "kind": "USER",
		},
	}
}

// sign is claims signed by key A under its honest header.
func (f *fixture) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	return f.keyA.Sign(t, encode(t, claims))
}

func encode(t testing.TB, claims map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) authenticate(t *testing.T, authorization string) (*call.Principal, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	return f.auth.Authenticate(ctx, authorization, f.tax)
}

func (f *fixture) accept(t *testing.T, token string) *call.Principal {
	t.Helper()
	p, err := f.authenticate(t, "Bearer "+token)
	if err != nil {
		t.Fatalf("a good token was refused: %v", err)
	}
	return p
}

// refuse asserts the header is refused as unauthenticated and returns the
// refusal's ledger detail.
func (f *fixture) refuse(t *testing.T, authorization string) string {
	t.Helper()
	p, err := f.authenticate(t, authorization)
	if err == nil {
		t.Fatalf("a token that must be refused was accepted as %+v", p)
	}
	var d *deny.Denied
	if !errors.As(err, &d) || d.Code != deny.Unauthenticated {
		t.Fatalf("refused with %v, want a deny.Unauthenticated refusal", err)
	}
	return d.Detail
}

// set is a copy of m with path (dot-separated) set to v, or removed when v
// is remove.
func set(m map[string]any, path string, v any) map[string]any {
	out := deepCopy(m).(map[string]any)
	at := out
	for {
		name, rest, more := cutDot(path)
		if !more {
			if v == remove {
				delete(at, name)
			} else {
				at[name] = v
			}
			return out
		}
		at = at[name].(map[string]any)
		path = rest
	}
}

type removal struct{}

var remove any = removal{}

func cutDot(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

// actor is an act level with its own sub and garm claim.
func actor(sub, clearance string, compartments, verbs []string) map[string]any {
	garm := map[string]any{"clearance": clearance, "kind": "AGENT"}
	if compartments != nil {
		garm["compartments"] = compartments
	}
	if verbs != nil {
		garm["verbs"] = verbs
	}
	return map[string]any{"sub": sub, "garm": garm}
}
