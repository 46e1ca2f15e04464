package keysettest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"hash"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// Key is a signing key generated for a test, published by kid.
type Key struct {
	Kid string
	// Alg is the algorithm the key signs with.
	Alg string
	// DeclareAlg publishes Alg in the key's JWK.
	DeclareAlg bool

	private crypto.Signer
}

// NewKey generates a key for alg (ES256/384/512, RS256/384/512,
// PS256/384/512 or EdDSA) named kid.
func NewKey(t testing.TB, alg, kid string) *Key {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ES512":
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "EdDSA":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("keysettest: no key for algorithm %q", alg)
	}
	if err != nil {
		t.Fatalf("keysettest: generating a %s key: %v", alg, err)
	}
	return &Key{Kid: kid, Alg: alg, private: priv}
}

// WithKid is the same key material published under another kid and alg,
// for a JWKS that lies about a key.
func (k *Key) WithKid(kid, alg string) *Key {
	return &Key{Kid: kid, Alg: alg, private: k.private}
}

// Public is the key's public half as the crypto packages hold it.
func (k *Key) Public() crypto.PublicKey { return k.private.Public() }

// PublicKeyForms are the encodings of the public key an attacker could use
// as an HMAC secret: DER (SubjectPublicKeyInfo), PEM, and the JWK as served.
func (k *Key) PublicKeyForms(t testing.TB) [][]byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return [][]byte{der, pemBytes, k.JWK(t)}
}

// JWK is the public key as a JWK with its kid (and alg when declared).
func (k *Key) JWK(t testing.TB) json.RawMessage {
	t.Helper()
	key, err := jwk.Import(k.Public())
	if err != nil {
		t.Fatalf("keysettest: importing a public key: %v", err)
	}
	if err := key.Set(jwk.KeyIDKey, k.Kid); err != nil {
		t.Fatal(err)
	}
	if k.DeclareAlg {
		if err := key.Set(jwk.AlgorithmKey, k.Alg); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Header is the honest header for this key: its alg, its kid, typ JWT.
// Callers may change it before SignWith.
func (k *Key) Header() map[string]any {
	return map[string]any{"alg": k.Alg, "kid": k.Kid, "typ": "JWT"}
}

// Sign is payload signed under the honest header.
func (k *Key) Sign(t testing.TB, payload []byte) string {
	t.Helper()
	return k.SignWith(t, k.Header(), payload)
}

// SignWith is payload signed with this key's algorithm under header, which
// is used exactly as given, whatever alg or kid it names.
func (k *Key) SignWith(t testing.TB, header map[string]any, payload []byte) string {
	t.Helper()
	input := SigningInput(t, header, payload)
	sig, err := k.signature([]byte(input))
	if err != nil {
		t.Fatalf("keysettest: signing: %v", err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (k *Key) signature(input []byte) ([]byte, error) {
	switch k.Alg {
	case "EdDSA":
		return ed25519.Sign(k.private.(ed25519.PrivateKey), input), nil
	case "ES256", "ES384", "ES512":
		h, _ := hashFor(k.Alg)
		priv := k.private.(*ecdsa.PrivateKey)
		r, s, err := ecdsa.Sign(rand.Reader, priv, digest(h, input))
		if err != nil {
			return nil, err
		}
		size := (priv.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*size)
		r.FillBytes(out[:size])
		s.FillBytes(out[size:])
		return out, nil
	case "RS256", "RS384", "RS512":
		h, id := hashFor(k.Alg)
		return rsa.SignPKCS1v15(nil, k.private.(*rsa.PrivateKey), id, digest(h, input))
	default: // PS*
		h, id := hashFor(k.Alg)
		return rsa.SignPSS(rand.Reader, k.private.(*rsa.PrivateKey), id, digest(h, input),
			&rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	}
}

func hashFor(alg string) (func() hash.Hash, crypto.Hash) {
	switch alg[len(alg)-3:] {
	case "384":
		return sha512.New384, crypto.SHA384
	case "512":
		return sha512.New, crypto.SHA512
	}
	return sha256.New, crypto.SHA256
}

func digest(h func() hash.Hash, input []byte) []byte {
	d := h()
	d.Write(input)
	return d.Sum(nil)
}

// SigningInput is base64url(header) "." base64url(payload).
func SigningInput(t testing.TB, header map[string]any, payload []byte) string {
	t.Helper()
	hb, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(payload)
}

// Unsigned is header.payload. with an empty signature, as alg "none" has.
func Unsigned(t testing.TB, header map[string]any, payload []byte) string {
	t.Helper()
	return SigningInput(t, header, payload) + "."
}

// HMAC is header.payload signed with HMAC-SHA-256 keyed with secret: the
// forgery that works against a verifier that takes the algorithm from the
// token and hands HMAC the public key.
func HMAC(t testing.TB, header map[string]any, payload, secret []byte) string {
	t.Helper()
	input := SigningInput(t, header, payload)
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
