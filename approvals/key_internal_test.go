package approvals

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

func writePEM(t *testing.T, key any, extra []byte) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), extra...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAGrantKeyIsP256OrEd25519AndItsKeySetVerifiesWhatItSigns(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, tc := range map[string]struct {
		key any
		alg string
	}{"Ed25519": {edKey, "EdDSA"}, "P-256": {ecKey, "ES256"}} {
		s, err := loadKey(writePEM(t, tc.key, nil))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.alg.String() != tc.alg {
			t.Errorf("%s: alg %s, want %s", name, s.alg, tc.alg)
		}
		again, _ := loadKey(writePEM(t, tc.key, nil))
		if again.kid != s.kid {
			t.Errorf("%s: the kid is not stable for one key", name)
		}
		signed, err := s.sign(map[string]string{"iss": "x"})
		if err != nil {
			t.Fatal(err)
		}
		set, err := jwk.Parse(s.jwks)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jws.Verify([]byte(signed), jws.WithKeySet(set, jws.WithRequireKid(true))); err != nil {
			t.Errorf("%s: the key set does not verify the signature: %v", name, err)
		}
		if bytes.Contains(s.jwks, []byte(`"d":`)) {
			t.Errorf("%s: the key set holds the private key: %s", name, s.jwks)
		}
	}
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for name, path := range map[string]string{
		"RSA":            writePEM(t, rsaKey, nil),
		"P-384":          writePEM(t, p384, nil),
		"two blocks":     writePEM(t, ecKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}})),
		"a missing file": filepath.Join(t.TempDir(), "none"),
	} {
		if _, err := loadKey(path); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
