package keyset

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// MinRSABits is the smallest RSA modulus a key set may use.
const MinRSABits = 2048

// family is what a key can verify: one curve, RSA, or Ed25519.
type family uint8

const (
	familyP256 family = iota + 1
	familyP384
	familyP521
	familyRSA
	familyEd25519
)

// verifyKey is one usable key of a set: the public key as the crypto
// packages take it, and the alg it declared, if any.
type verifyKey struct {
	public   any
	family   family
	declared string
}

// download fetches and parses the set; start is when the fetch began.
func (s *Set) download(ctx context.Context, start time.Time) (*snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the endpoint answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("the body is larger than %d bytes", MaxBodyBytes)
	}
	keys, err := s.parse(body)
	if err != nil {
		return nil, err
	}
	return &snapshot{keys: keys, expires: start.Add(TTL), refreshAt: start.Add(TTL - RefreshAhead)}, nil
}

// parse is the usable keys of a JWKS document by kid. The document must be
// a JSON object with a "keys" array; a key that cannot be used (no kid, a
// symmetric or unknown type, use "enc", key_ops without "verify", a weak
// RSA modulus, a kid held by two keys) is skipped and logged, so one odd key
// does not cost the issuer its others.
func (s *Set) parse(body []byte) (map[string]*verifyKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the body is not a JWK set: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New(`the body is not a JWK set: no "keys" array`)
	}
	keys := make(map[string]*verifyKey, len(doc.Keys))
	duplicated := map[string]bool{}
	for i, raw := range doc.Keys {
		kid, k, err := usable(raw)
		if err != nil {
			s.log.Warn("keyset: skipping a key", "url", s.url, "index", i, "kid", clip(kid), "reason", err.Error())
			continue
		}
		if _, dup := keys[kid]; dup || duplicated[kid] {
			duplicated[kid] = true
			delete(keys, kid)
			s.log.Warn("keyset: skipping a kid held by more than one key", "url", s.url, "kid", clip(kid))
			continue
		}
		keys[kid] = k
	}
	return keys, nil
}

// usable is one JWK as a verification key, or why it cannot be one.
func usable(raw json.RawMessage) (string, *verifyKey, error) {
	key, err := jwk.ParseKey(raw)
	if err != nil {
		return "", nil, fmt.Errorf("unparseable: %w", err)
	}
	kid, _ := key.KeyID()
	if kid == "" {
		return "", nil, errors.New("no kid")
	}
	if use, ok := key.KeyUsage(); ok && use != "sig" {
		return kid, nil, fmt.Errorf("use is %q", use)
	}
	if ops, ok := key.KeyOps(); ok && !hasVerify(ops) {
		return kid, nil, errors.New(`key_ops does not include "verify"`)
	}
	var declared string
	if alg, ok := key.Algorithm(); ok {
		declared = alg.String()
	}
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		return kid, nil, fmt.Errorf("no public key: %w", err)
	}
	var public any
	if err := jwk.Export(pub, &public); err != nil {
		return kid, nil, fmt.Errorf("unusable: %w", err)
	}
	fam, err := familyOf(public)
	if err != nil {
		return kid, nil, err
	}
	return kid, &verifyKey{public: public, family: fam, declared: declared}, nil
}

func hasVerify(ops jwk.KeyOperationList) bool {
	for _, op := range ops {
		if op == jwk.KeyOpVerify {
			return true
		}
	}
	return false
}

func familyOf(public any) (family, error) {
	switch k := public.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return familyP256, nil
		case elliptic.P384():
			return familyP384, nil
		case elliptic.P521():
			return familyP521, nil
		}
		return 0, fmt.Errorf("curve %s is not used by any allowed algorithm", k.Curve.Params().Name)
	case *rsa.PublicKey:
		if k.N.BitLen() < MinRSABits {
			return 0, fmt.Errorf("RSA modulus of %d bits is below %d", k.N.BitLen(), MinRSABits)
		}
		return familyRSA, nil
	case ed25519.PublicKey:
		return familyEd25519, nil
	}
	return 0, fmt.Errorf("key type %T is not used by any allowed algorithm", public)
}
