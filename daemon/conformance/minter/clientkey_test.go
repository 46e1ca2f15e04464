package minter_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/daemon/conformance/minter"
)

func writeKey(t *testing.T, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAClientKeyIsReadAsPKCS8OrSEC1AndOnlyOnP256(t *testing.T) {
	t.Parallel()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(p256)
	sec1, _ := x509.MarshalECPrivateKey(p256)
	other, _ := x509.MarshalPKCS8PrivateKey(p384)
	for name, path := range map[string]string{"PKCS #8": writeKey(t, "PRIVATE KEY", pkcs8), "SEC 1": writeKey(t, "EC PRIVATE KEY", sec1)} {
		k, err := minter.LoadClientKey(path)
		if err != nil || !k.Equal(p256) {
			t.Errorf("%s: LoadClientKey answered %v", name, err)
		}
	}
	if _, err := minter.LoadClientKey(writeKey(t, "PRIVATE KEY", other)); err == nil {
		t.Error("a P-384 key was read as an ES256 client key")
	}
	if _, err := minter.LoadClientKey(writeKey(t, "PRIVATE KEY", []byte("not a key"))); err == nil {
		t.Error("a PEM block holding no key was read as a client key")
	}
}
