package head

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
)

// Keys are the public keys a verifier accepts, by key id.
type Keys map[string]ed25519.PublicKey

// KeyID is pub's RFC 7638 thumbprint, base64url without padding.
func KeyID(pub ed25519.PublicKey) (string, error) {
	k, err := jwk.Import(pub)
	if err != nil {
		return "", err
	}
	if err := jwk.AssignKeyID(k); err != nil {
		return "", err
	}
	kid, _ := k.KeyID()
	return kid, nil
}

// Signer is a private key and its id.
type Signer struct {
	Key   ed25519.PrivateKey
	KeyID string
}

// NewSigner is the signer of key.
func NewSigner(key ed25519.PrivateKey) (Signer, error) {
	kid, err := KeyID(key.Public().(ed25519.PublicKey))
	return Signer{Key: key, KeyID: kid}, err
}

// LoadSigner reads an Ed25519 private key from a PKCS #8 PEM file.
func LoadSigner(path string) (Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Signer{}, err
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return Signer{}, fmt.Errorf("%s holds no PKCS #8 private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return Signer{}, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return Signer{}, fmt.Errorf("%s holds a %T, not an Ed25519 key", path, k)
	}
	return NewSigner(key)
}

// GenerateKeyFile writes a new Ed25519 private key to path, readable by
// its owner alone; it refuses to overwrite a file.
func GenerateKeyFile(path string) (Signer, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Signer{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Signer{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Signer{}, err
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return Signer{}, err
	}
	if err := f.Close(); err != nil {
		return Signer{}, err
	}
	return NewSigner(key)
}

// JWKS is the JSON Web Key Set of pubs, for verifiers: each an OKP Ed25519
// key with its thumbprint as kid, "use": "sig" and "alg": "EdDSA".
func JWKS(pubs ...ed25519.PublicKey) ([]byte, error) {
	set := jwk.NewSet()
	for _, pub := range pubs {
		k, err := jwk.Import(pub)
		if err != nil {
			return nil, err
		}
		if err := jwk.AssignKeyID(k); err != nil {
			return nil, err
		}
		if err := k.Set(jwk.KeyUsageKey, jwk.ForSignature); err != nil {
			return nil, err
		}
		if err := k.Set(jwk.AlgorithmKey, jwa.EdDSA()); err != nil {
			return nil, err
		}
		if err := set.AddKey(k); err != nil {
			return nil, err
		}
	}
	return json.MarshalIndent(set, "", "  ")
}

// ParseJWKS reads the Ed25519 keys of a JWKS; a key of any other type, or
// whose kid is not its thumbprint, is refused rather than skipped.
func ParseJWKS(b []byte) (Keys, error) {
	set, err := jwk.Parse(b)
	if err != nil {
		return nil, err
	}
	keys := Keys{}
	for i := range set.Len() {
		k, _ := set.Key(i)
		var pub ed25519.PublicKey
		if err := jwk.Export(k, &pub); err != nil {
			return nil, fmt.Errorf("key %d of the JWKS is not an Ed25519 public key: %w", i, err)
		}
		kid, err := KeyID(pub)
		if err != nil {
			return nil, err
		}
		if got, ok := k.KeyID(); ok && got != kid {
			return nil, fmt.Errorf("key %d of the JWKS is named %q, but its thumbprint is %q", i, got, kid)
		}
		keys[kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("the JWKS holds no key")
	}
	return keys, nil
}
