//go:build conformance

package minter_test

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/conformance/minter"
	"github.com/garm-dev/garm/devkit/idp"
)

// stsTokenPath is the fixture STS's token endpoint.
const stsTokenPath = "/oauth2/token"

// sts is a minimal security token service: a form-post token endpoint
// that authenticates its client by a private-key JWT (RFC 7523 section
// 2.2) and issues, for grant_type client_credentials, the token the dev
// identity provider issues for the persona registered to the client. It
// exists to prove the form-post driver against an endpoint of the shape a
// real STS has.
type sts struct {
	idp *idp.IdP
	// clients are the registered clients: their public key and persona.
	clients map[string]stsClient
	url     string
	// ignoreClientAuth makes the fixture broken: it issues to anyone.
	ignoreClientAuth bool

	mu   sync.Mutex
	seen map[string]bool
}

type stsClient struct {
	key       *ecdsa.PublicKey
	user, act string
}

func startSTS(t *testing.T, id *idp.IdP, clients map[string]stsClient, ignoreClientAuth bool) *sts {
	t.Helper()
	s := &sts{idp: id, clients: clients, ignoreClientAuth: ignoreClientAuth, seen: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+stsTokenPath, s.serveToken)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL + stsTokenPath
	return s
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func (s *sts) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	id := r.PostForm.Get("client_id")
	client, ok := s.clients[id]
	if !ok {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if !s.ignoreClientAuth && !s.authenticated(r, id, client.key) {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	token, err := s.idp.Token(client.user, client.act)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 3600})
}

// authenticated is RFC 7523 section 3 for the client id: an ES256 JWT
// signed by the client's registered key, iss and sub the client, aud this
// endpoint, unexpired, and a jti not seen before.
func (s *sts) authenticated(r *http.Request, id string, key *ecdsa.PublicKey) bool {
	if r.PostForm.Get("client_assertion_type") != minter.ClientAssertionType {
		return false
	}
	parts := strings.Split(r.PostForm.Get("client_assertion"), ".")
	if len(parts) != 3 {
		return false
	}
	enc := base64.RawURLEncoding
	var header struct {
		Alg string `json:"alg"`
	}
	h, err := enc.DecodeString(parts[0])
	if err != nil || json.Unmarshal(h, &header) != nil || header.Alg != "ES256" {
		return false
	}
	sig, err := enc.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	var claims struct {
		Iss, Sub, Jti string
		Aud           any
		Exp           int64
	}
	p, err := enc.DecodeString(parts[1])
	if err != nil || json.Unmarshal(p, &claims) != nil {
		return false
	}
	var auds []string
	switch aud := claims.Aud.(type) {
	case string:
		auds = []string{aud}
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok {
				auds = append(auds, s)
			}
		}
	}
	if claims.Iss != id || claims.Sub != id || !slices.Contains(auds, s.url) || claims.Jti == "" ||
		!time.Now().Before(time.Unix(claims.Exp, 0)) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[claims.Jti] {
		return false
	}
	s.seen[claims.Jti] = true
	return true
}
