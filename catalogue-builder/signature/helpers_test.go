package signature_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// newSigner makes a key at run time; alg is signature.AlgEdDSA or AlgES256.
func newSigner(t testing.TB, alg string) *signature.Signer {
	t.Helper()
	s, _, err := signature.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keySet is the JWKS of the signers' public keys, each in its group ("" for
// none), parsed.
func keySet(t testing.TB, groups map[*signature.Signer]string, signers ...*signature.Signer) *signature.KeySet {
	t.Helper()
	data := keySetJSON(t, groups, signers...)
	set, err := signature.ParseKeySet(data)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func keySetJSON(t testing.TB, groups map[*signature.Signer]string, signers ...*signature.Signer) []byte {
	t.Helper()
	var jwks []map[string]any
	for _, s := range signers {
		j, err := signature.PublicJWK(s.Public(), groups[s])
		if err != nil {
			t.Fatal(err)
		}
		jwks = append(jwks, j)
	}
	data, err := signature.MarshalKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

var testArtifact = []byte("a catalogue's bytes")

func statement(version uint64) signature.Statement {
	return signature.Statement{
		Catalogue: "payments",
		Digest:    digestOf(testArtifact),
		Version:   version,
		SignedAt:  time.Date(2026, 12, 5, 4, 30, 0, 0, time.UTC),
	}
}

// signed is an envelope over statement(version) by the signers, as bytes.
func signed(t testing.TB, version uint64, signers ...*signature.Signer) []byte {
	t.Helper()
	e, err := signature.Sign(statement(version), signers...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func p384PEM(t testing.TB) []byte {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
