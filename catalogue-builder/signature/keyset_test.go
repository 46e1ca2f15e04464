package signature_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// jwkOf is one signer's public JWK as a map, for tests that spoil one.
func jwkOf(t *testing.T, s *signature.Signer, group string) map[string]any {
	t.Helper()
	j, err := signature.PublicJWK(s.Public(), group)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func setOf(t *testing.T, keys ...map[string]any) []byte {
	t.Helper()
	out, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAKeySetHoldsCatalogueKeysOnly(t *testing.T) {
	t.Parallel()
	ed, p256 := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgES256)
	with := func(s *signature.Signer, f func(map[string]any)) map[string]any {
		j := jwkOf(t, s, "owners")
		f(j)
		return j
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p384JWK, err := jwk.Import(p384.Public())
	if err != nil {
		t.Fatal(err)
	}
	raw384, _ := json.Marshal(p384JWK)
	var m384 map[string]any
	_ = json.Unmarshal(raw384, &m384)
	m384["use"], m384["alg"], m384["kid"] = signature.KeyUse, "ES384", "x"
	for name, data := range map[string][]byte{
		"a token key (use sig)":             setOf(t, with(ed, func(j map[string]any) { j["use"] = "sig" })),
		"a key without use":                 setOf(t, with(ed, func(j map[string]any) { delete(j, "use") })),
		"an Ed25519 key presented as ES256": setOf(t, with(ed, func(j map[string]any) { j["alg"] = signature.AlgES256 })),
		"a P-256 key presented as EdDSA":    setOf(t, with(p256, func(j map[string]any) { j["alg"] = signature.AlgEdDSA })),
		"a key without alg":                 setOf(t, with(ed, func(j map[string]any) { delete(j, "alg") })),
		"a kid that is not the thumbprint":  setOf(t, with(ed, func(j map[string]any) { j["kid"] = "alice" })),
		"another key's kid":                 setOf(t, with(ed, func(j map[string]any) { j["kid"] = p256.KeyID() })),
		"a key listed twice":                setOf(t, jwkOf(t, ed, ""), jwkOf(t, ed, "owners")),
		"a private member":                  setOf(t, with(ed, func(j map[string]any) { j["d"] = j["x"] })),
		"a group in capitals":               setOf(t, with(ed, func(j map[string]any) { j[signature.GroupMember] = "Owners" })),
		"key_ops sign":                      setOf(t, with(ed, func(j map[string]any) { j["key_ops"] = []string{"sign"} })),
		"a P-384 key":                       setOf(t, m384),
		"no keys":                           []byte(`{"keys":[]}`),
		"not a set":                         []byte(`[]`),
		"a member named twice":              []byte(strings.Replace(string(setOf(t, jwkOf(t, ed, ""))), `"keys"`, `"keys":[],"keys"`, 1)),
	} {
		if _, err := signature.ParseKeySet(data); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	set, err := signature.ParseKeySet(setOf(t, jwkOf(t, ed, "owners"), jwkOf(t, p256, "")))
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := set.Lookup(ed.KeyID()); !ok || k.Group != "owners" || k.Alg != signature.AlgEdDSA {
		t.Errorf("Lookup(ed) = %+v, %v", k, ok)
	}
	if len(set.Keys()) != 2 {
		t.Errorf("Keys() = %+v", set.Keys())
	}
}

func TestPolicyChecksDistinctSignersAndGroups(t *testing.T) {
	t.Parallel()
	a, b, c := signature.Key{KeyID: "a", Group: "owners"}, signature.Key{KeyID: "b", Group: "owners"}, signature.Key{KeyID: "c", Group: "security"}
	for _, tc := range []struct {
		name    string
		policy  signature.Policy
		signers []signature.Key
		ok      bool
	}{
		{"zero means one, and Verify gives at least one", signature.Policy{}, []signature.Key{a}, true},
		{"two of two", signature.Policy{MinSigners: 2}, []signature.Key{a, c}, true},
		{"one of two", signature.Policy{MinSigners: 2}, []signature.Key{a}, false},
		{"an owner and security", signature.Policy{MinPerGroup: map[string]int{"owners": 1, "security": 1}}, []signature.Key{a, c}, true},
		{"two owners, no security", signature.Policy{MinSigners: 2, MinPerGroup: map[string]int{"owners": 1, "security": 1}}, []signature.Key{a, b}, false},
		{"two owners required", signature.Policy{MinPerGroup: map[string]int{"owners": 2}}, []signature.Key{a, c}, false},
	} {
		err := tc.policy.Check(&signature.Verified{Signers: tc.signers})
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v", tc.name, err)
		}
	}
}

func TestAPolicyTheKeysCannotMeetIsReportedAtOnce(t *testing.T) {
	t.Parallel()
	a := newSigner(t, signature.AlgEdDSA)
	keys := keySet(t, map[*signature.Signer]string{a: "owners"}, a)
	err := signature.Policy{MinSigners: 2, MinPerGroup: map[string]int{"owners": 2, "security": 1, "Bad": 1}}.Validate(keys)
	if err == nil {
		t.Fatal("an unmeetable policy validated")
	}
	for _, want := range []string{"2 signers are required", "group owners", "group security", `"Bad"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say %q", err, want)
		}
	}
	if err := (signature.Policy{MinSigners: 1, MinPerGroup: map[string]int{"owners": 1}}).Validate(keys); err != nil {
		t.Errorf("a meetable policy: %v", err)
	}
}
