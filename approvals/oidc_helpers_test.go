package approvals_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// foreignIdP is an OpenID Connect provider unlike the dev one: its ID tokens name a person by an
// opaque sub of its own and carry their garm subject in another claim, as many real providers
// do. It signs in whoever the test names, without a picker.
type foreignIdP struct {
	srv *httptest.Server
	key jwk.Key
	mu  sync.Mutex
	// next is the claims of the next ID token, besides iss, aud, iat, exp and nonce.
	next  map[string]any
	codes map[string]map[string]any
}

func startForeignIdP(t *testing.T) *foreignIdP {
	t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, "foreign-1")
	_ = key.Set(jwk.AlgorithmKey, jwa.ES256())
	f := &foreignIdP{key: key, codes: map[string]map[string]any{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": f.srv.URL, "authorization_endpoint": f.srv.URL + "/authorize", "token_endpoint": f.srv.URL + "/token",
			"jwks_uri": f.srv.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"ES256"},
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		pub, _ := f.key.PublicKey()
		set := jwk.NewSet()
		_ = set.AddKey(pub)
		_ = json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		claims := map[string]any{}
		for k, v := range f.next {
			claims[k] = v
		}
		claims["nonce"], claims["aud"] = q.Get("nonce"), q.Get("client_id")
		code := rand.Text()
		f.codes[code] = claims
		f.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusSeeOther)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		claims, ok := f.codes[r.PostForm.Get("code")]
		delete(f.codes, r.PostForm.Get("code"))
		f.mu.Unlock()
		if !ok {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		now := time.Now()
		claims["iss"], claims["iat"], claims["exp"] = f.srv.URL, now.Unix(), now.Add(time.Hour).Unix()
		payload, _ := json.Marshal(claims)
		hdr := jws.NewHeaders()
		_ = hdr.Set(jws.KeyIDKey, "foreign-1")
		signed, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), f.key, jws.WithProtectedHeaders(hdr)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "opaque", "token_type": "Bearer", "id_token": string(signed)})
	})
	return f
}

// signInAs signs a fresh browser in to p through f with the ID token claims given.
func (f *foreignIdP) signInAs(t *testing.T, p *plane, claims map[string]any) (*browser, page) {
	t.Helper()
	f.mu.Lock()
	f.next = claims
	f.mu.Unlock()
	jar, _ := cookiejar.New(nil)
	b := &browser{Client: &http.Client{Jar: jar, Timeout: 20 * time.Second}, t: t}
	return b, b.get(p.base + "/login")
}
