package sealer

import (
	"crypto/ed25519"
	"net/http"

	"github.com/garm-dev/garm/ledger/head"
)

// JWKSPath is where JWKSHandler answers.
const JWKSPath = "/.well-known/jwks.json"

// JWKSHandler serves the JWKS of pubs (the sealer's key, and earlier keys
// whose heads verifiers must still accept) at JWKSPath, and nothing else.
func JWKSHandler(pubs ...ed25519.PublicKey) (http.Handler, error) {
	body, err := head.JWKS(pubs...)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+JWKSPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(body)
	})
	return mux, nil
}
