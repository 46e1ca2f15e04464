package authn

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// FuzzAuthenticate feeds Authenticate two kinds of input: raw bearer tokens
// (sign false), which must never be accepted unless the test key signed
// them, and arbitrary payloads that the test key signs (sign true), which
// reach the claim parser and the fold. Nothing may panic, and whatever is
// accepted must be a principal the fold could honestly produce.
func FuzzAuthenticate(f *testing.F) {
	key := keysettest.NewKey(f, "ES256", "a-1")
	jwks := keysettest.NewServer(f, key)
	clock := keysettest.NewClock(epoch)
	tax := newTaxonomy("finance", "hr", "legal")
	auth, err := New(Config{
		Issuers:  []Issuer{{Name: issuerA, JWKSURL: jwks.URL}},
		Audience: audience,
		Now:      clock.Now,
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		f.Fatal(err)
	}
	now := epoch.Unix()
	good := map[string]any{
		"iss": issuerA, "aud": audience, "sub": "alice", "exp": now + 3600,
		"garm": map[string]any{"clearance": "INTERNAL", "compartments": []string{"finance", "typo"}, "verbs": []string{"READ"}},
	}
	deep := set(good, "act", actor("a1", "PUBLIC", []string{"finance"}, []string{"READ", "WRITE"}))
	deep = set(deep, "act.act", actor("a2", "RESTRICTED", []string{"finance", "hr"}, []string{"read"}))
	deep = set(deep, "act.garm.tool_sets", []string{"ops"})
	deep = set(deep, "exec", map[string]any{"sub": "runner:1"})
	payloads := [][]byte{encode(f, good), encode(f, deep), encode(f, set(good, "act", nil)),
		encode(f, set(good, "garm.clearance", 20)), []byte(`{"iss":"` + issuerA + `"}`), []byte(`[]`), []byte(`{`)}
	for _, p := range payloads {
		f.Add(p, true)
	}
	valid := key.Sign(f, encode(f, good))
	parts := strings.Split(valid, ".")
	h := key.Header()
	h["alg"] = "none"
	none := keysettest.Unsigned(f, h, encode(f, good))
	h["alg"] = "HS256"
	hmacked := keysettest.HMAC(f, h, encode(f, good), key.PublicKeyForms(f)[0])
	for _, tok := range []string{valid, key.Sign(f, encode(f, deep)), none, hmacked,
		parts[0] + "." + parts[1], valid + "." + parts[2], `{"payload":"` + parts[1] + `"}`, "", "Bearer", strings.Repeat("a.", 9000)} {
		f.Add([]byte(tok), false)
	}

	f.Fuzz(func(t *testing.T, data []byte, sign bool) {
		token := string(data)
		if sign {
			token = key.Sign(t, data)
		}
		p, err := auth.Authenticate(t.Context(), "Bearer "+token, tax)
		if err != nil {
			return
		}
		if !sign && !signedBy(key, token) {
			t.Fatalf("accepted a token the test key did not sign: %q", token)
		}
		switch {
		case p.Subject == "":
			t.Fatal("accepted a principal without a subject")
		case p.Clearance == toolv1.Clearance_CLEARANCE_UNSPECIFIED:
			t.Fatal("accepted an unspecified clearance")
		case p.Depth() > MaxDepth:
			t.Fatalf("accepted a chain %d deep", p.Depth())
		case !slices.IsSorted(p.CompartmentNames):
			t.Fatalf("compartment names not sorted: %v", p.CompartmentNames)
		case !p.Scoped && len(p.ToolSets) > 0:
			t.Fatal("an unscoped principal holds tool sets")
		case !clock.Now().Before(p.Expiry.Add(specSkew)):
			t.Fatal("accepted an expired token")
		}
		for _, n := range p.CompartmentNames {
			if _, ok := slices.BinarySearch(tax.declared, n); !ok {
				t.Fatalf("kept an undeclared compartment %q", n)
			}
		}
	})
}

// signedBy checks an ES256 compact JWS against key with the standard
// library alone, independently of the code under test.
func signedBy(key *keysettest.Key, token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(key.Public().(*ecdsa.PublicKey), sum[:], r, s)
}
