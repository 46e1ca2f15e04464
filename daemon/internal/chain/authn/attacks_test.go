package authn

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

func TestAGoodTokenIsAcceptedUnderAnyCaseOfTheBearerScheme(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, f.claims())
	for _, scheme := range []string{"Bearer ", "bearer ", "BEARER ", "Bearer   "} {
		p, err := f.authenticate(t, scheme+token)
		if err != nil {
			t.Fatalf("%q refused: %v", scheme, err)
		}
		if p.Subject != "alice" {
			t.Fatalf("subject %q, want alice", p.Subject)
		}
	}
}

func TestAMissingOrNonBearerAuthorizationIsRefused(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, f.claims())
	for name, header := range map[string]string{
		"no header":      "",
		"basic":          "Basic " + token,
		"no space":       "Bearer" + token,
		"scheme only":    "Bearer",
		"scheme, spaces": "Bearer    ",
		"token scheme":   "Token " + token,
		"raw token":      token,
		"tab":            "Bearer\t" + token,
	} {
		t.Run(name, func(t *testing.T) { f.refuse(t, header) })
	}
	wantNoFetch(t, f)
}

func TestMalformedTokensAreRefused(t *testing.T) {
	f := newFixture(t)
	good := f.sign(t, f.claims())
	p := strings.Split(good, ".")
	flattened, _ := json.Marshal(map[string]string{"protected": p[0], "payload": p[1], "signature": p[2]})
	for name, token := range map[string]string{
		"two parts":            p[0] + "." + p[1],
		"four parts":           good + "." + p[2],
		"five parts":           good + "." + p[1] + "." + p[2],
		"bad base64 header":    "e!." + p[1] + "." + p[2],
		"bad base64 payload":   p[0] + ".%%%." + p[2],
		"padded payload":       p[0] + "." + p[1] + "==." + p[2],
		"bad base64 signature": p[0] + "." + p[1] + ".***",
		"payload not JSON":     p[0] + ".bm90IGpzb24." + p[2],
		"payload an array":     p[0] + ".W10." + p[2],
		"JSON serialization":   string(flattened),
		"empty signature":      p[0] + "." + p[1] + ".",
	} {
		t.Run(name, func(t *testing.T) { f.refuse(t, "Bearer "+token) })
	}
}

func TestAlgNoneIsRefused(t *testing.T) {
	f := newFixture(t)
	for _, alg := range []string{"none", "NONE", "None"} {
		h := f.keyA.Header()
		h["alg"] = alg
		unsigned := keysettest.Unsigned(t, h, encode(t, f.claims()))
		f.refuse(t, "Bearer "+unsigned)
		// With something in the signature's place, it is the algorithm
		// that is refused.
		detail := f.refuse(t, "Bearer "+unsigned+"AAAA")
		if !strings.Contains(detail, "not allowed") {
			t.Fatalf("detail %q does not say the algorithm is not allowed", detail)
		}
	}
	wantNoFetch(t, f)
}

func TestHS256SignedWithTheIssuersPublicKeyIsRefused(t *testing.T) {
	for _, alg := range []string{"ES256", "RS256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			f := newFixtureWith(t, keysettest.NewKey(t, alg, "a-1"), func(*Config) {})
			f.accept(t, f.sign(t, f.claims()))
			for _, secret := range f.keyA.PublicKeyForms(t) {
				h := f.keyA.Header()
				h["alg"] = "HS256"
				f.refuse(t, "Bearer "+keysettest.HMAC(t, h, encode(t, f.claims()), secret))
			}
		})
	}
}

func TestATokenWithoutAKidIsRefused(t *testing.T) {
	f := newFixture(t)
	h := f.keyA.Header()
	delete(h, "kid")
	f.refuse(t, "Bearer "+f.keyA.SignWith(t, h, encode(t, f.claims())))
	wantNoFetch(t, f)
}

func TestKeysNamedInTheTokensHeaderAreNeverFetched(t *testing.T) {
	f := newFixture(t)
	attacker := keysettest.NewKey(t, "ES256", "attacker")
	evil := keysettest.NewServer(t, attacker)
	var attackerJWK map[string]any
	if err := json.Unmarshal(attacker.JWK(t), &attackerJWK); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]any{"jku": evil.URL, "x5u": evil.URL, "jwk": attackerJWK} {
		for _, kid := range []string{"attacker", f.keyA.Kid} {
			t.Run(name+"/"+kid, func(t *testing.T) {
				h := attacker.Header()
				h["kid"], h[name] = kid, value
				f.refuse(t, "Bearer "+attacker.SignWith(t, h, encode(t, f.claims())))
			})
		}
	}
	if n := evil.Hits(); n != 0 {
		t.Fatalf("the attacker's key set was asked %d times, want 0", n)
	}
}

func TestATokenForAnUnknownIssuerIsRefusedWithoutFetchingAnyKeySet(t *testing.T) {
	f := newFixture(t)
	for name, iss := range map[string]any{
		"unknown":       "https://idp-evil.example",
		"prefix":        issuerA + "/",
		"case":          strings.ToUpper(issuerA),
		"not a string":  7,
		"null":          nil,
		"missing (nil)": remove,
	} {
		t.Run(name, func(t *testing.T) {
			f.refuse(t, "Bearer "+f.sign(t, set(f.claims(), "iss", iss)))
		})
	}
	wantNoFetch(t, f)
}

func TestATokenNamingIssuerASignedWithIssuerBsKeyIsRefused(t *testing.T) {
	f := newFixture(t)
	f.refuse(t, "Bearer "+f.keyB.Sign(t, encode(t, f.claims())))
	// B's own tokens are good; A's key set was consulted, B's never was.
	if n := f.jwksB.Hits(); n != 0 {
		t.Fatalf("issuer B's key set was asked %d times for an issuer A token", n)
	}
	f.accept(t, f.keyB.Sign(t, encode(t, set(f.claims(), "iss", issuerB))))
}

func TestExpiredAndNotYetValidTokensAreRefusedWithSkewBothWays(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now().Unix()
	skew := int64(specSkew.Seconds())
	cases := []struct {
		name   string
		claims map[string]any
		ok     bool
	}{
		{"expired long ago", set(f.claims(), "exp", now-3600), false},
		{"expired at the edge of the skew", set(f.claims(), "exp", now-skew), false},
		{"expired within the skew", set(f.claims(), "exp", now-skew+1), true},
		{"no exp", set(f.claims(), "exp", remove), false},
		{"exp a string", set(f.claims(), "exp", "2099-01-01"), false},
		{"exp null", set(f.claims(), "exp", nil), false},
		{"not yet valid", set(f.claims(), "nbf", now+3600), false},
		{"not yet valid beyond the skew", set(f.claims(), "nbf", now+skew+1), false},
		{"not yet valid within the skew", set(f.claims(), "nbf", now+skew), true},
		{"valid since", set(f.claims(), "nbf", now-10), true},
		{"issued in the future", set(f.claims(), "iat", now+3600), false},
		{"issued beyond the skew", set(f.claims(), "iat", now+skew+1), false},
		{"issued within the skew", set(f.claims(), "iat", now+skew), true},
		{"iat a string", set(f.claims(), "iat", "now"), false},
		{"no iat", set(f.claims(), "iat", remove), true},
		{"fractional dates", set(set(f.claims(), "nbf", float64(now)-0.5), "exp", float64(now)+0.5), true},
		{"nbf a string", set(f.claims(), "nbf", "now"), false},
		{"negative exp", set(f.claims(), "exp", -1), false},
		{"exp beyond year 9999", set(f.claims(), "exp", 1e15), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			token := f.sign(t, c.claims)
			if c.ok {
				f.accept(t, token)
			} else {
				f.refuse(t, "Bearer "+token)
			}
		})
	}
}

func TestATokenForAnotherAudienceIsRefused(t *testing.T) {
	f := newFixture(t)
	for name, aud := range map[string]any{
		"other":          "other.example",
		"array without":  []string{"other.example", "x"},
		"empty array":    []string{},
		"missing":        remove,
		"number":         7,
		"null":           nil,
		"array of junk":  []any{audience, 7},
		"case differs":   strings.ToUpper(audience),
		"array of array": []any{[]string{audience}},
	} {
		t.Run(name, func(t *testing.T) { f.refuse(t, "Bearer "+f.sign(t, set(f.claims(), "aud", aud))) })
	}
	f.accept(t, f.sign(t, set(f.claims(), "aud", []string{"other.example", audience})))
}

func TestATokenOverSixteenKiBIsRefusedBeforeParsing(t *testing.T) {
	f := newFixture(t)
	good := f.sign(t, set(f.claims(), "pad", ""))
	pad := strings.Repeat("x", MaxTokenBytes-len(good))
	// Base64 skips some lengths: grow the pad, and the jti by one byte when
	// needed, until the token is exactly at the limit.
	atLimit := ""
	for _, jti := range []string{"t", "tt"} {
		need := (MaxTokenBytes - len(good)) * 3 / 4
		for n := need - 4; n < need+4 && atLimit == ""; n++ {
			if tok := f.sign(t, set(set(f.claims(), "jti", jti), "pad", pad[:n])); len(tok) == MaxTokenBytes {
				atLimit = tok
			}
		}
	}
	if atLimit == "" {
		t.Fatal("could not make a token of exactly MaxTokenBytes")
	}
	f.accept(t, atLimit)
	over := f.sign(t, set(f.claims(), "pad", pad+"xxxx"))
	if len(over) <= MaxTokenBytes {
		t.Fatalf("test token of %d bytes is not over the limit", len(over))
	}
	detail := f.refuse(t, "Bearer "+over)
	if !strings.Contains(detail, "larger than") {
		t.Fatalf("detail %q does not say the token is too large", detail)
	}
	f.refuse(t, "Bearer "+strings.Repeat("A", 1<<20))
}

func wantNoFetch(t *testing.T, f *fixture) {
	t.Helper()
	if a, b := f.jwksA.Hits(), f.jwksB.Hits(); a+b != 0 {
		t.Fatalf("key sets were fetched (A %d, B %d times) for tokens refused before any key is needed", a, b)
	}
}

func TestATokenForTheMCPResourceIsAcceptedWhenThatAudienceIsConfigured(t *testing.T) {
	const resource = "https://garm.example/mcp"
	f := newFixtureWith(t, keysettest.NewKey(t, "ES256", "a-1"), func(c *Config) { c.Audiences = []string{resource} })
	f.accept(t, f.sign(t, set(f.claims(), "aud", resource)))
	f.accept(t, f.sign(t, set(f.claims(), "aud", []string{"other.example", resource})))
	f.accept(t, f.sign(t, set(f.claims(), "aud", audience)))
	for name, aud := range map[string]any{
		"another resource":       "https://garm.example/mcp/",
		"the resource's origin":  "https://garm.example",
		"case differs":           strings.ToUpper(resource),
		"neither in an array":    []string{"other.example", "https://evil.example/mcp"},
		"resource inside junk":   []any{resource, 7},
		"resource nested":        []any{[]string{resource}},
		"without the configured": remove,
	} {
		t.Run(name, func(t *testing.T) { f.refuse(t, "Bearer "+f.sign(t, set(f.claims(), "aud", aud))) })
	}
	// Without the further audience, the resource's URL is just another
	// audience.
	plain := newFixture(t)
	plain.refuse(t, "Bearer "+plain.sign(t, set(plain.claims(), "aud", resource)))
}

func TestAnEmptyFurtherAudienceIsAConfigurationError(t *testing.T) {
	_, err := New(Config{Issuers: []Issuer{{Name: issuerA, JWKSURL: "https://k.example/jwks"}}, Audience: audience, Audiences: []string{""}})
	if err == nil || !strings.Contains(err.Error(), "further audience 0 is empty") {
		t.Fatalf("%v", err)
	}
}
