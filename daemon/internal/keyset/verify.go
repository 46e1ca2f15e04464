package keyset

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// Header is what a verified JWS said about itself in its protected header.
type Header struct {
	// Alg is the signature algorithm, one of the allowlist.
	Alg string
	// Kid names the key that verified the signature.
	Kid string
	// Typ is the header's typ, empty when absent.
	Typ string
}

// allowed is one algorithm of the allowlist and the keys that fit it.
type allowed struct {
	alg    jwa.SignatureAlgorithm
	family family
}

// algorithms is the allowlist (design 7.5). Nothing else is ever verified:
// not "none", not HMAC, not the fully-specified Ed25519 spelling.
var algorithms = map[string]allowed{
	"ES256": {jwa.ES256(), familyP256},
	"ES384": {jwa.ES384(), familyP384},
	"ES512": {jwa.ES512(), familyP521},
	"RS256": {jwa.RS256(), familyRSA},
	"RS384": {jwa.RS384(), familyRSA},
	"RS512": {jwa.RS512(), familyRSA},
	"PS256": {jwa.PS256(), familyRSA},
	"PS384": {jwa.PS384(), familyRSA},
	"PS512": {jwa.PS512(), familyRSA},
	"EdDSA": {jwa.EdDSA(), familyEd25519},
}

// Verify checks a compact JWS against this set and returns its payload. It
// refuses anything but compact serialization with three non-empty parts, a
// header without a kid or with an algorithm off the allowlist, a kid the set
// does not hold (after the one refetch the rules allow), a key that does not
// fit the algorithm, and a signature that does not verify. The errors are
// plain and safe to record: they quote at most a kid or an algorithm name.
func (s *Set) Verify(ctx context.Context, compact []byte) ([]byte, Header, error) {
	h, err := ParseHeader(compact)
	if err != nil {
		return nil, Header{}, err
	}
	a := algorithms[h.Alg]
	key, err := s.key(ctx, h.Kid)
	if err != nil {
		return nil, Header{}, err
	}
	if key.family != a.family {
		return nil, Header{}, fmt.Errorf("the key with kid %q does not fit algorithm %s", clip(h.Kid), h.Alg)
	}
	if key.declared != "" && key.declared != h.Alg {
		return nil, Header{}, fmt.Errorf("the key with kid %q is declared for %s, not %s", clip(h.Kid), clip(key.declared), h.Alg)
	}
	payload, err := jws.Verify(compact,
		jws.WithCompact(),
		jws.WithKey(a.alg, key.public),
		jws.WithAlgorithmMatch(true),
		jws.WithCritValidation(true),
	)
	if err != nil {
		return nil, Header{}, fmt.Errorf("the signature does not verify with the key with kid %q", clip(h.Kid))
	}
	return payload, h, nil
}

// ParseHeader reads the protected header of a compact JWS without verifying
// anything, refusing what Verify would refuse before looking for a key. It
// is exported so that callers can refuse malformed input cheaply and
// uniformly; nothing it returns may be trusted before Verify succeeds.
func ParseHeader(compact []byte) (Header, error) {
	if err := checkCompact(compact); err != nil {
		return Header{}, err
	}
	encoded := compact[:bytes.IndexByte(compact, '.')]
	raw, err := base64.RawURLEncoding.Strict().DecodeString(string(encoded))
	if err != nil {
		return Header{}, errors.New("the header is not base64url")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Header{}, errors.New("the header is not a JSON object")
	}
	var h Header
	if h.Alg, err = headerString(fields, "alg"); err != nil {
		return Header{}, err
	}
	if _, ok := algorithms[h.Alg]; !ok {
		return Header{}, fmt.Errorf("algorithm %q is not allowed", clip(h.Alg))
	}
	if h.Kid, err = headerString(fields, "kid"); err != nil {
		return Header{}, err
	}
	if h.Kid == "" {
		return Header{}, errors.New("the header has no kid")
	}
	if _, ok := fields["typ"]; ok {
		if h.Typ, err = headerString(fields, "typ"); err != nil {
			return Header{}, err
		}
	}
	// crit and b64 change what a signature covers; nothing here needs them.
	for _, name := range [...]string{"crit", "b64"} {
		if _, ok := fields[name]; ok {
			return Header{}, fmt.Errorf("the header carries %q, which is not supported", name)
		}
	}
	return h, nil
}

// checkCompact refuses anything but three non-empty base64url parts.
func checkCompact(compact []byte) error {
	if len(compact) == 0 {
		return errors.New("the token is empty")
	}
	if compact[0] == '{' {
		return errors.New("JSON serialization is refused: compact only")
	}
	dots := 0
	last := -1
	for i, c := range compact {
		switch {
		case c == '.':
			if i == last+1 {
				return errors.New("the token has an empty part")
			}
			dots++
			last = i
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return errors.New("the token has a character outside base64url")
		}
	}
	if dots != 2 {
		return fmt.Errorf("the token has %d parts, not 3", dots+1)
	}
	if last == len(compact)-1 {
		return errors.New("the token has an empty part")
	}
	return nil
}

func headerString(fields map[string]json.RawMessage, name string) (string, error) {
	raw, ok := fields[name]
	if !ok {
		return "", fmt.Errorf("the header has no %s", name)
	}
	var v string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", fmt.Errorf("the header's %s is not a string", name)
	}
	return v, nil
}
