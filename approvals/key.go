package approvals

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// signer is the grant signing key: its algorithm, its kid (the RFC 7638 thumbprint of its public
// key, so the same file always has the same kid) and the key set garmd verifies with.
type signer struct {
	alg  jwa.SignatureAlgorithm
	key  jwk.Key
	kid  string
	jwks []byte
}

// loadKey reads a grant signing key file: one PEM block "PRIVATE KEY" holding a PKCS#8 P-256
// key (signing ES256) or Ed25519 key (signing EdDSA). Anything else — another curve, RSA, an
// encrypted or second block — is refused.
func loadKey(path string) (*signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("--key %s: not a PEM PRIVATE KEY (PKCS#8) block", path)
	}
	if len(trimSpace(rest)) > 0 {
		return nil, fmt.Errorf("--key %s: more than one PEM block", path)
	}
	raw, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("--key %s: %w", path, err)
	}
	return newSigner(raw)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// newSigner wraps a P-256 or Ed25519 private key.
func newSigner(raw crypto.PrivateKey) (*signer, error) {
	var alg jwa.SignatureAlgorithm
	switch k := raw.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("--key: an ECDSA key must be on P-256 (ES256)")
		}
		alg = jwa.ES256()
	case ed25519.PrivateKey:
		alg = jwa.EdDSA()
	default:
		return nil, fmt.Errorf("--key: a %T cannot sign grants; use P-256 (ES256) or Ed25519 (EdDSA)", raw)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	thumb, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("--key: thumbprint: %w", err)
	}
	kid := base64.RawURLEncoding.EncodeToString(thumb)
	for _, k := range []jwk.Key{key, pub} {
		for name, v := range map[string]any{jwk.KeyIDKey: kid, jwk.AlgorithmKey: alg, jwk.KeyUsageKey: jwk.ForSignature} {
			if err := k.Set(name, v); err != nil {
				return nil, fmt.Errorf("--key: %s: %w", name, err)
			}
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, err
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	return &signer{alg: alg, key: key, kid: kid, jwks: jwks}, nil
}

// sign marshals claims and signs them as a compact JWS with typ JWT and the key's kid.
func (s *signer) sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, s.kid); err != nil {
		return "", err
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		return "", err
	}
	signed, err := jws.Sign(payload, jws.WithKey(s.alg, s.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", err
	}
	return string(signed), nil
}

// WriteKeyFile writes a fresh P-256 grant signing key to path, readable by its owner only, for a
// deployment's first start and for the dev plane, which makes one per run.
func WriteKeyFile(path string) error {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}
