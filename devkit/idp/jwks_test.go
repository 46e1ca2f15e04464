package idp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/garm-dev/garm/devkit/idp"
)

func TestTheServedKeySetVerifiesTokensFetchedOverHTTP(t *testing.T) {
	ctx := testContext(t)
	i := newIdP(t, idp.Options{})
	srv := start(t, i)
	for _, query := range []string{"user=support", "user=support&as=assistant", "user=analyst&exec=runner:ci"} {
		token := fetchToken(t, ctx, srv, query)
		parsed, err := verify(t, ctx, srv, i, token)
		if err != nil {
			t.Fatalf("%s: token does not verify against the served key set: %v", query, err)
		}
		if sub, _ := parsed.Subject(); sub == "" {
			t.Errorf("%s: verified token has no subject", query)
		}
	}
}

func TestTheKeySetHoldsOnlyThePublicKeyNamedByEveryTokenHeader(t *testing.T) {
	ctx := testContext(t)
	i := newIdP(t, idp.Options{})
	srv := start(t, i)
	res := do(t, ctx, http.MethodGet, srv.JWKSURL())
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET jwks: %d %q", res.status, res.header.Get("Content-Type"))
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(res.body, &set); err != nil {
		t.Fatalf("key set: %v\n%s", err, res.body)
	}
	if len(set.Keys) != 1 {
		t.Fatalf("key set has %d keys, want 1: %s", len(set.Keys), res.body)
	}
	key := set.Keys[0]
	if _, private := key["d"]; private {
		t.Fatal("the key set publishes the private key")
	}
	for name, want := range map[string]string{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig"} {
		if key[name] != want {
			t.Errorf("key %s = %v, want %s", name, key[name], want)
		}
	}
	kid, _ := key["kid"].(string)
	if kid == "" {
		t.Fatal("key has no kid")
	}

	token := fetchToken(t, ctx, srv, "user=outsider")
	header := segment(t, token, 0)
	want := map[string]any{"alg": "ES256", "kid": kid, "typ": "JWT"}
	if g, w := asJSON(t, header), asJSON(t, want); g != w {
		t.Errorf("token header:\n%s\nwant:\n%s", g, w)
	}
}

func TestEachIdPSignsWithItsOwnEphemeralKey(t *testing.T) {
	ctx := testContext(t)
	first, second := newIdP(t, idp.Options{}), newIdP(t, idp.Options{})
	firstSrv, secondSrv := start(t, first), start(t, second)
	a, err := jwk.Fetch(ctx, firstSrv.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	b, err := jwk.Fetch(ctx, secondSrv.JWKSURL())
	if err != nil {
		t.Fatal(err)
	}
	ka, _ := a.Key(0)
	kb, _ := b.Key(0)
	kidA, _ := ka.KeyID()
	kidB, _ := kb.KeyID()
	if kidA == kidB || jwk.Equal(ka, kb) {
		t.Fatalf("two IdPs share a key (kid %q)", kidA)
	}
	token, err := second.Token("support", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, ctx, firstSrv, first, token); err == nil {
		t.Fatal("a token from one IdP verified against another's key set")
	}
}
