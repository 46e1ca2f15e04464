package garmd_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// forger signs whatever claims a test writes, with a key of its own that
// the stack may or may not trust.
type forger struct {
	t      testing.TB
	key    jwk.Key
	public jwk.Key
	kid    string
}

func newForger(t testing.TB, kid string) *forger {
	t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, kid)
	_ = key.Set(jwk.AlgorithmKey, jwa.ES256())
	public, err := key.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	return &forger{t: t, key: key, public: public, kid: kid}
}

// jwks serves the forger's public key set; hits counts requests.
func (f *forger) jwks(hits *atomic.Int64) *httptest.Server {
	set := jwk.NewSet()
	_ = set.AddKey(f.public)
	body, _ := json.Marshal(set)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	f.t.Cleanup(srv.Close)
	return srv
}

// sign signs claims with the forger's key; extra headers are added.
func (f *forger) sign(claims map[string]any, extra map[string]any) string {
	f.t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		f.t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.KeyIDKey, f.kid)
	for k, v := range extra {
		_ = hdr.Set(k, v)
	}
	out, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), f.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(out)
}

// claims are a valid token's claims for issuer, audience "garm".
func validClaims(issuer string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": issuer, "sub": "user:forged", "aud": "garm", "tenant": "acme",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"garm": map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ"}},
	}
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// An attacker's issuer the stack trusts as a second issuer, so tests can
// sign any claims with a trusted key.
const forgedIssuer = "https://forged-but-trusted.garm.invalid"

func withIssuer(issuer, jwksURL string) stackOption {
	return func(c *garmd.Config) {
		c.Issuers = append(c.Issuers, issuer)
		c.JWKS = append(c.JWKS, jwksURL)
	}
}

func TestIdentityAttacksAreEachRefused401WithALedgerRow(t *testing.T) {
	t.Parallel()
	trusted := newForger(t, "trusted-1")
	attacker := newForger(t, "attacker-1")
	var attackerHits atomic.Int64
	attackerJWKS := attacker.jwks(&attackerHits)
	s := startStack(t, withIssuer(forgedIssuer, trusted.jwks(nil).URL))

	// The IdP's public key, as an HMAC secret: the classic confusion.
	resp, err := http.Get(s.cfg.JWKS[0])
	if err != nil {
		t.Fatal(err)
	}
	idpJWKS, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	hsHeader := b64(map[string]any{"alg": "HS256", "kid": "x", "typ": "JWT"})
	hsPayload := b64(validClaims(s.idp.Issuer()))
	mac := hmac.New(sha256.New, idpJWKS)
	mac.Write([]byte(hsHeader + "." + hsPayload))
	hs256 := hsHeader + "." + hsPayload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))

	edit := func(change func(c map[string]any)) string {
		c := validClaims(forgedIssuer)
		change(c)
		return trusted.sign(c, nil)
	}
	deep := func(levels int) string {
		return edit(func(c map[string]any) {
			var act map[string]any
			for i := levels - 1; i >= 1; i-- {
				level := map[string]any{"sub": "agent:" + string(rune('a'+i)), "garm": map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ"}}}
				if act != nil {
					level["act"] = act
				}
				act = level
			}
			c["act"] = act
		})
	}
	attacks := []struct {
		name   string
		header string // the whole Authorization header; "" sends none
	}{
		{"no token", ""},
		{"not a bearer token", "Basic dXNlcjpwYXNz"},
		{"malformed", "Bearer not.a.jwt"},
		{"two parts", "Bearer " + hsHeader + "." + hsPayload},
		{"alg none", "Bearer " + b64(map[string]any{"alg": "none", "kid": "trusted-1"}) + "." + b64(validClaims(forgedIssuer)) + "."},
		{"HS256 signed with the issuer's public key", "Bearer " + hs256},
		{"an unknown kid", "Bearer " + func() string { f := newForger(t, "unknown-kid"); return f.sign(validClaims(forgedIssuer), nil) }()},
		{"a jku pointing at the attacker's keys", "Bearer " + attacker.sign(validClaims(forgedIssuer), map[string]any{"jku": attackerJWKS.URL})},
		{"an embedded jwk", "Bearer " + attacker.sign(validClaims(forgedIssuer), map[string]any{"jwk": attacker.public})},
		{"an x5u pointing elsewhere", "Bearer " + attacker.sign(validClaims(forgedIssuer), map[string]any{"x5u": attackerJWKS.URL})},
		{"expired", "Bearer " + edit(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })},
		{"not yet valid", "Bearer " + edit(func(c map[string]any) { c["nbf"] = time.Now().Add(5 * time.Minute).Unix() })},
		{"wrong audience", "Bearer " + edit(func(c map[string]any) { c["aud"] = "someone-else" })},
		{"unknown issuer", "Bearer " + edit(func(c map[string]any) { c["iss"] = "https://stranger.garm.invalid" })},
		{"issuer A signed by issuer B's key", "Bearer " + edit(func(c map[string]any) { c["iss"] = s.idp.Issuer() })},
		{"over 16 KiB", "Bearer " + edit(func(c map[string]any) { c["pad"] = strings.Repeat("p", 16<<10) })},
		{"missing garm", "Bearer " + edit(func(c map[string]any) { delete(c, "garm") })},
		{"unknown clearance", "Bearer " + edit(func(c map[string]any) {
			c["garm"] = map[string]any{"clearance": "TOP_SECRET", "verbs": []string{"READ"}}
		})},
		{"act depth 5", "Bearer " + deep(5)},
		{"malformed exec", "Bearer " + edit(func(c map[string]any) { c["exec"] = "runner:r1" })},
		{"exec without sub", "Bearer " + edit(func(c map[string]any) { c["exec"] = map[string]any{"iss": "x"} })},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			var ans *answer
			if a.header == "" {
				ans = s.post(addPath, "", `{"a": 1, "b": 2}`)
			} else {
				ans = s.post(addPath, "", `{"a": 1, "b": 2}`, "Authorization", a.header)
			}
			if ans.status != http.StatusUnauthorized || ans.header.Get("WWW-Authenticate") != "Bearer" ||
				string(ans.body) != `{"code":"unauthenticated","message":"A valid bearer token is required."}` {
				t.Fatalf("%d %v %s", ans.status, ans.header, ans.body)
			}
			if d := ans.header.Get("Garm-Catalogue-Digest"); d != "" {
				t.Errorf("an unauthenticated caller was told the catalogue digest %s", d)
			}
			row := s.row(ans.eventID())
			if row.GetOutcome() != "denied" || row.GetTool() != addPath || row.GetErrorDetail() == "" || row.GetPrincipalSubject() != "" ||
				row.GetCatalogueDigest() == "" {
				t.Fatalf("row %v", row)
			}
		})
	}
	if n := attackerHits.Load(); n != 0 {
		t.Fatalf("garmd fetched the attacker's key set %d times", n)
	}
	// The same claims at depth 4 pass: the limit is exact.
	if ans := s.post(addPath, "", `{"a": 1, "b": 2}`, "Authorization", "Bearer "+deep(4)); ans.status != http.StatusOK {
		t.Fatalf("depth 4: %d %s", ans.status, ans.body)
	}
}
