package signature

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// Signer is a catalogue-signing private key.
type Signer struct {
	keyID   string
	alg     string
	private crypto.Signer
}

// KeyID is the signer's key id (the RFC 7638 thumbprint of its public key).
func (s *Signer) KeyID() string { return s.keyID }

// Alg is AlgEdDSA or AlgES256.
func (s *Signer) Alg() string { return s.alg }

// Public is the signer's public key.
func (s *Signer) Public() crypto.PublicKey { return s.private.Public() }

// NewSigner wraps an Ed25519 or ECDSA P-256 private key; any other key is
// refused.
func NewSigner(private crypto.PrivateKey) (*Signer, error) {
	var alg string
	var signer crypto.Signer
	switch k := private.(type) {
	case ed25519.PrivateKey:
		alg, signer = AlgEdDSA, k
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("an ECDSA key on %s: only P-256 signs catalogues", k.Curve.Params().Name)
		}
		alg, signer = AlgES256, k
	default:
		return nil, fmt.Errorf("a %T key: only Ed25519 and ECDSA P-256 sign catalogues", private)
	}
	kid, err := Thumbprint(signer.Public())
	if err != nil {
		return nil, err
	}
	return &Signer{keyID: kid, alg: alg, private: signer}, nil
}

// LoadSigner reads a private key PEM file's bytes: exactly one "PRIVATE
// KEY" block holding a PKCS#8 Ed25519 or ECDSA P-256 key, unencrypted.
func LoadSigner(pemBytes []byte) (*Signer, error) {
	block, rest := pem.Decode(pemBytes)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM PRIVATE KEY (PKCS#8) block")
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("more than one PEM block")
	}
	if len(block.Headers) > 0 {
		return nil, errors.New("a PEM block with headers (an encrypted key?)")
	}
	raw, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	return NewSigner(raw)
}

// GenerateKey makes a new catalogue-signing key, alg AlgEdDSA or AlgES256,
// and returns it with its PKCS#8 PEM encoding.
func GenerateKey(alg string) (*Signer, []byte, error) {
	var private crypto.PrivateKey
	var err error
	switch alg {
	case AlgEdDSA:
		_, private, err = ed25519.GenerateKey(rand.Reader)
	case AlgES256:
		private, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		return nil, nil, fmt.Errorf("the algorithm %s: use %s or %s", clip(alg), AlgEdDSA, AlgES256)
	}
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		return nil, nil, err
	}
	s, err := NewSigner(private)
	if err != nil {
		return nil, nil, err
	}
	return s, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// sign signs an envelope's PAE.
func (s *Signer) sign(payload []byte) ([]byte, error) {
	pae := dsse.PAE(PayloadType, payload)
	switch k := s.private.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(k, pae), nil
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256(pae)
		return ecdsa.SignASN1(rand.Reader, k, sum[:])
	}
	return nil, fmt.Errorf("a %T key cannot sign", s.private)
}

// Sign makes an envelope over the statement, signed by each signer in
// turn. The statement must be valid (Statement.Validate); two signers with
// one key are refused.
func Sign(st Statement, signers ...*Signer) (*Envelope, error) {
	if len(signers) == 0 {
		return nil, errors.New("no signer")
	}
	payload, err := st.marshal()
	if err != nil {
		return nil, err
	}
	e := &Envelope{Statement: st, Payload: payload}
	e.Statement.SignedAt = st.SignedAt.UTC().Truncate(time.Second)
	for _, s := range signers {
		if err := AddSignature(e, s); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// AddSignature adds the signer's signature over the envelope's statement,
// unchanged. A key that already signed the envelope is refused (a second
// signature by one key would count once anyway), as is an envelope already
// holding MaxSignatures signatures.
func AddSignature(e *Envelope, s *Signer) error {
	for _, existing := range e.Signatures {
		if existing.KeyID == s.keyID {
			return fmt.Errorf("%w: key %s has already signed this statement", ErrAlreadySigned, s.keyID)
		}
	}
	if len(e.Signatures) >= MaxSignatures {
		return fmt.Errorf("the envelope already holds %d signatures", MaxSignatures)
	}
	sig, err := s.sign(e.Payload)
	if err != nil {
		return err
	}
	e.Signatures = append(e.Signatures, Signature{KeyID: s.keyID, Sig: sig})
	return nil
}
