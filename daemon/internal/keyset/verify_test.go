package keyset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

var payload = []byte(`{"sub":"alice"}`)

func TestEveryAllowedAlgorithmVerifiesWithItsOwnKey(t *testing.T) {
	algs := []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}
	var keys []*keysettest.Key
	rsa := keysettest.NewKey(t, "RS256", "")
	for _, alg := range algs {
		var k *keysettest.Key
		if strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS") {
			k = rsa.WithKid("k-"+alg, alg)
		} else {
			k = keysettest.NewKey(t, alg, "k-"+alg)
		}
		keys = append(keys, k)
	}
	srv := keysettest.NewServer(t, keys...)
	s, _ := newSet(t, srv)
	for _, k := range keys {
		t.Run(k.Alg, func(t *testing.T) {
			got, h, err := verify(t, s, k.Sign(t, payload))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if string(got) != string(payload) {
				t.Fatalf("payload %q, want %q", got, payload)
			}
			if h.Alg != k.Alg || h.Kid != k.Kid || h.Typ != "JWT" {
				t.Fatalf("header %+v, want alg %s kid %s typ JWT", h, k.Alg, k.Kid)
			}
		})
	}
	wantHits(t, srv, 1)
}

func TestAlgorithmsOffTheAllowlistAreRefusedBeforeAnyKeyIsFetched(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	for _, alg := range []string{"none", "None", "HS256", "HS384", "HS512", "ES256K", "Ed25519", "RSA-OAEP", "es256", ""} {
		t.Run(alg, func(t *testing.T) {
			h := k.Header()
			h["alg"] = alg
			mustRefuse(t, s, k.SignWith(t, h, payload))
			mustRefuse(t, s, keysettest.Unsigned(t, h, payload))
		})
	}
	wantHits(t, srv, 0)
}

func TestAnHMACTokenKeyedWithTheIssuersPublicKeyIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "RS256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))
	for _, secret := range k.PublicKeyForms(t) {
		for _, alg := range []string{"HS256", "RS256"} {
			h := k.Header()
			h["alg"] = alg
			err := mustRefuse(t, s, keysettest.HMAC(t, h, payload, secret))
			want := map[string]string{"HS256": "not allowed", "RS256": "does not verify"}[alg]
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("refused with %q, want a reason containing %q", err, want)
			}
		}
	}
}

func TestATokenWithoutAKidIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	for name, kid := range map[string]any{"absent": nil, "empty": "", "number": 1, "null": "null"} {
		t.Run(name, func(t *testing.T) {
			h := k.Header()
			switch kid {
			case nil:
				delete(h, "kid")
			case "null":
				h["kid"] = nil
			default:
				h["kid"] = kid
			}
			mustRefuse(t, s, k.SignWith(t, h, payload))
		})
	}
	wantHits(t, srv, 0)
}

func TestMalformedTokensAreRefused(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	good := k.Sign(t, payload)
	parts := strings.Split(good, ".")
	flattened, _ := json.Marshal(map[string]string{"protected": parts[0], "payload": parts[1], "signature": parts[2]})
	general, _ := json.Marshal(map[string]any{"payload": parts[1], "signatures": []map[string]string{
		{"protected": parts[0], "signature": parts[2]},
		{"protected": parts[0], "signature": parts[2]},
	}})
	withHeader := func(extra map[string]any) string {
		h := k.Header()
		for name, v := range extra {
			h[name] = v
		}
		return k.SignWith(t, h, payload)
	}
	cases := map[string]string{
		"empty":           "",
		"two parts":       parts[0] + "." + parts[1],
		"four parts":      good + "." + parts[2],
		"empty payload":   parts[0] + ".." + parts[2],
		"empty signature": parts[0] + "." + parts[1] + ".",
		"empty header":    "." + parts[1] + "." + parts[2],
		"padding":         parts[0] + "=." + parts[1] + "." + parts[2],
		"standard base64": strings.ReplaceAll(good, "_", "/") + "+",
		"space":           " " + good,
		"newline":         good + "\n",
		"flattened JSON":  string(flattened),
		"general JSON":    string(general),
		"header not JSON": "bm90IGpzb24." + parts[1] + "." + parts[2],
		"header an array": "WzFd." + parts[1] + "." + parts[2],
		"header null":     "bnVsbA." + parts[1] + "." + parts[2],
		"alg a number":    withHeader(map[string]any{"alg": 7}),
		"crit header":     withHeader(map[string]any{"crit": []string{"exp"}, "exp": 1}),
		"b64 false":       withHeader(map[string]any{"b64": false, "crit": []string{"b64"}}),
		"typ a number":    withHeader(map[string]any{"typ": 1}),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) { mustRefuse(t, s, token) })
	}
	mustVerify(t, s, good)
}

func TestKeysNamedByTheTokensHeaderAreNeverFetchedNorUsed(t *testing.T) {
	issuer := keysettest.NewKey(t, "ES256", "issuer-key")
	srv := keysettest.NewServer(t, issuer)
	attacker := keysettest.NewKey(t, "ES256", "attacker-key")
	evil := keysettest.NewServer(t, attacker)
	s, _ := newSet(t, srv)

	var attackerJWK map[string]any
	if err := json.Unmarshal(attacker.JWK(t), &attackerJWK); err != nil {
		t.Fatal(err)
	}
	for _, kid := range []string{"attacker-key", "issuer-key"} {
		for name, value := range map[string]any{
			"jku": evil.URL, "x5u": evil.URL, "jwk": attackerJWK, "x5c": []string{"MIIB"},
		} {
			t.Run(kid+"/"+name, func(t *testing.T) {
				h := attacker.Header()
				h["kid"], h[name] = kid, value
				mustRefuse(t, s, attacker.SignWith(t, h, payload))
			})
		}
	}
	if got := evil.Hits(); got != 0 {
		t.Fatalf("the attacker's key set was fetched %d times", got)
	}
	// The same headers on a token the issuer signed change nothing.
	h := issuer.Header()
	h["jku"], h["jwk"] = evil.URL, attackerJWK
	mustVerify(t, s, issuer.SignWith(t, h, payload))
}

func TestASignatureByAnotherKeyUnderTheSameKidIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	other := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	mustRefuse(t, s, other.Sign(t, payload))
}

func TestATamperedPayloadIsRefused(t *testing.T) {
	k := keysettest.NewKey(t, "EdDSA", "k1")
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	parts := strings.Split(k.Sign(t, []byte(`{"sub":"alice"}`)), ".")
	forged := strings.Split(k.Sign(t, []byte(`{"sub":"admin"}`)), ".")
	mustRefuse(t, s, parts[0]+"."+forged[1]+"."+parts[2])
}

func TestAKeyThatDoesNotFitTheAlgorithmIsRefused(t *testing.T) {
	p256 := keysettest.NewKey(t, "ES256", "k-ec")
	rsa := keysettest.NewKey(t, "RS256", "k-rsa")
	ed := keysettest.NewKey(t, "EdDSA", "k-ed")
	srv := keysettest.NewServer(t, p256, rsa, ed)
	s, _ := newSet(t, srv)
	cases := map[string]string{
		// A P-384 signature presented under the P-256 key's kid.
		"ES384 on a P-256 key": keysettest.NewKey(t, "ES384", "k-ec").Sign(t, payload),
		"ES256 on an RSA key":  keysettest.NewKey(t, "ES256", "k-rsa").Sign(t, payload),
		"RS256 on an EC key":   rsa.WithKid("k-ec", "RS256").Sign(t, payload),
		"EdDSA on an RSA key":  ed.WithKid("k-rsa", "EdDSA").Sign(t, payload),
		"RS256 on an Ed key":   rsa.WithKid("k-ed", "RS256").Sign(t, payload),
	}
	for name, token := range cases {
		t.Run(name, func(t *testing.T) { mustRefuse(t, s, token) })
	}
}

func TestAKeyThatDeclaresAnAlgVerifiesThatAlgOnly(t *testing.T) {
	k := keysettest.NewKey(t, "RS256", "k1")
	k.DeclareAlg = true
	srv := keysettest.NewServer(t, k)
	s, _ := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))
	mustRefuse(t, s, k.WithKid("k1", "PS256").Sign(t, payload))
	mustRefuse(t, s, k.WithKid("k1", "RS512").Sign(t, payload))
}
