package sealer_test

import (
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/sealer"
)

func TestTheServedJWKSVerifiesTheSealersHeads(t *testing.T) {
	t.Parallel()
	signer := ledgertest.Signer(t)
	h, err := sealer.JWKSHandler(signer.Key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + sealer.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	keys, err := head.ParseJWKS(body)
	if err != nil {
		t.Fatal(err)
	}
	signed := head.Sign(head.Head{Size: 0, Root: merkle.EmptyRoot(), Time: time.Now(), KeyID: signer.KeyID}, signer.Key, nil)
	if err := signed.Verify(keys); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/jwks.json", sealer.JWKSPath + "/x"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s answered %d", path, resp.StatusCode)
		}
	}
}
