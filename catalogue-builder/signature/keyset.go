package signature

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// KeyUse is the JWK "use" of a catalogue-signing key. RFC 7517 lets a key
// set name uses of its own; this one is neither "sig" nor "enc", so a token
// verifier (which takes "sig" keys or keys without a use) never takes a
// catalogue key, and this package never takes a token key.
const KeyUse = "garm-catalogue"

// GroupMember is the JWK member naming the group a catalogue key belongs to
// ("owners", "security"), for Policy.MinPerGroup. It is optional.
const GroupMember = "garm_group"

// The algorithms a catalogue key may sign with, as JWK "alg" spells them.
const (
	AlgEdDSA = "EdDSA" // Ed25519
	AlgES256 = "ES256" // ECDSA P-256 with SHA-256, signatures in ASN.1 DER
)

// Bounds on a key set document.
const (
	MaxKeySetBytes = 256 << 10
	MaxKeys        = 256
)

var groupRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Key is one catalogue-signing public key.
type Key struct {
	// KeyID is the key's kid, its RFC 7638 SHA-256 thumbprint in unpadded
	// base64url.
	KeyID string
	// Alg is AlgEdDSA or AlgES256: the one algorithm this key verifies with.
	Alg string
	// Group is the key's garm_group, or "".
	Group  string
	public crypto.PublicKey
}

// KeySet is the catalogue keys a reader trusts, by key id.
type KeySet struct {
	keys map[string]*Key
}

// Keys lists the set's keys sorted by key id.
func (s *KeySet) Keys() []Key {
	out := make([]Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].KeyID < out[j].KeyID })
	return out
}

// Lookup is the key with this key id.
func (s *KeySet) Lookup(keyID string) (Key, bool) {
	k, ok := s.keys[keyID]
	if !ok {
		return Key{}, false
	}
	return *k, true
}

// ParseKeySet reads a catalogue key set: a JWKS whose every key is a
// catalogue-signing key. Unlike a token key set, which skips a key it cannot
// use, this one refuses the whole document for any key that is not exactly
// right, because it is written by the catalogue's owners and a key silently
// dropped is a signer silently ignored. It refuses: more than MaxKeySetBytes
// or MaxKeys; duplicate members; a key whose use is not KeyUse (a token
// key); one without alg, or whose alg does not fit its type and curve
// (EdDSA for an OKP Ed25519 key, ES256 for an EC P-256 key, nothing else);
// one holding private material; one whose kid is not its RFC 7638
// thumbprint; a key listed twice; a group that is not lowercase letters,
// digits, '_' and '-'; and a set with no key.
func ParseKeySet(data []byte) (*KeySet, error) {
	if len(data) > MaxKeySetBytes {
		return nil, fmt.Errorf("the catalogue key set is larger than %d bytes", MaxKeySetBytes)
	}
	if err := checkJSON(data); err != nil {
		return nil, fmt.Errorf("the catalogue key set: %w", err)
	}
	m, err := members(data, []string{"keys"}, nil)
	if err != nil {
		return nil, fmt.Errorf("the catalogue key set: %w", err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m["keys"], &raws); err != nil || len(raws) == 0 {
		return nil, errors.New(`the catalogue key set: "keys" is not a non-empty array`)
	}
	if len(raws) > MaxKeys {
		return nil, fmt.Errorf("the catalogue key set holds %d keys: at most %d", len(raws), MaxKeys)
	}
	set := &KeySet{keys: make(map[string]*Key, len(raws))}
	for i, raw := range raws {
		k, err := parseKey(raw)
		if err != nil {
			return nil, fmt.Errorf("the catalogue key set: key %d: %w", i, err)
		}
		if _, dup := set.keys[k.KeyID]; dup {
			return nil, fmt.Errorf("the catalogue key set: key %d: kid %s is listed twice", i, k.KeyID)
		}
		set.keys[k.KeyID] = k
	}
	return set, nil
}

// parseKey reads one catalogue public key JWK.
func parseKey(raw json.RawMessage) (*Key, error) {
	m, err := members(raw, []string{"kty", "kid", "use", "alg"}, []string{"crv", "x", "y", GroupMember, "key_ops"})
	if err != nil {
		return nil, err
	}
	use, err := jsonString(m, "use")
	if err != nil {
		return nil, err
	}
	if use != KeyUse {
		return nil, fmt.Errorf("use is %s, not %q: not a catalogue-signing key", clip(use), KeyUse)
	}
	if _, ok := m["key_ops"]; ok {
		var ops []string
		if err := json.Unmarshal(m["key_ops"], &ops); err != nil || len(ops) != 1 || ops[0] != "verify" {
			return nil, errors.New(`key_ops, when present, must be exactly ["verify"]`)
		}
	}
	group, err := jsonString(m, GroupMember)
	if err != nil {
		return nil, err
	}
	if _, ok := m[GroupMember]; ok && !groupRE.MatchString(group) {
		return nil, fmt.Errorf("%s %s is not 1 to 64 lowercase letters, digits, '_' or '-'", GroupMember, clip(group))
	}
	alg, err := jsonString(m, "alg")
	if err != nil {
		return nil, err
	}
	kid, err := jsonString(m, "kid")
	if err != nil {
		return nil, err
	}
	key, err := jwk.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("unparseable: %w", err)
	}
	var public any
	if err := jwk.Export(key, &public); err != nil {
		return nil, fmt.Errorf("unusable: %w", err)
	}
	if err := algFits(alg, public); err != nil {
		return nil, err
	}
	thumb, err := Thumbprint(public)
	if err != nil {
		return nil, err
	}
	if kid != thumb {
		return nil, fmt.Errorf("kid %s is not the key's RFC 7638 thumbprint %s", clip(kid), thumb)
	}
	return &Key{KeyID: kid, Alg: alg, Group: group, public: public}, nil
}

// algFits refuses a public key that is not the one kind alg signs with:
// the guard against a key of one type being presented as another.
func algFits(alg string, public any) error {
	switch k := public.(type) {
	case ed25519.PublicKey:
		if alg == AlgEdDSA {
			return nil
		}
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() && alg == AlgES256 {
			return nil
		}
		if k.Curve != elliptic.P256() {
			return fmt.Errorf("an ECDSA key on %s: only P-256 signs catalogues", k.Curve.Params().Name)
		}
	case ed25519.PrivateKey, *ecdsa.PrivateKey:
		return errors.New("a private key: a key set holds public keys only")
	default:
		return fmt.Errorf("a %T key: only Ed25519 and ECDSA P-256 sign catalogues", public)
	}
	return fmt.Errorf("alg %s does not fit a %s key", clip(alg), kindOf(public))
}

func kindOf(public any) string {
	if _, ok := public.(ed25519.PublicKey); ok {
		return "Ed25519"
	}
	return "ECDSA P-256"
}

// Thumbprint is a public key's key id: its RFC 7638 JWK thumbprint (SHA-256)
// in unpadded base64url.
func Thumbprint(public crypto.PublicKey) (string, error) {
	key, err := jwk.Import(public)
	if err != nil {
		return "", fmt.Errorf("thumbprint: %w", err)
	}
	sum, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// PublicJWK is a catalogue public key as a JWK object: kty, its curve and
// coordinates, kid (the thumbprint), use KeyUse, alg, and garm_group when
// group is not empty.
func PublicJWK(public crypto.PublicKey, group string) (map[string]any, error) {
	alg := ""
	switch k := public.(type) {
	case ed25519.PublicKey:
		alg = AlgEdDSA
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			alg = AlgES256
		}
	}
	if alg == "" {
		return nil, fmt.Errorf("a %T key: only Ed25519 and ECDSA P-256 sign catalogues", public)
	}
	if group != "" && !groupRE.MatchString(group) {
		return nil, fmt.Errorf("the group %s is not 1 to 64 lowercase letters, digits, '_' or '-'", clip(group))
	}
	key, err := jwk.Import(public)
	if err != nil {
		return nil, err
	}
	kid, err := Thumbprint(public)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	out["kid"] = kid
	out["use"] = KeyUse
	out["alg"] = alg
	if group != "" {
		out[GroupMember] = group
	}
	return out, nil
}

// MarshalKeySet writes JWK objects (from PublicJWK) as a JWKS document,
// refusing anything ParseKeySet would refuse.
func MarshalKeySet(keys []map[string]any) ([]byte, error) {
	out, err := json.MarshalIndent(map[string]any{"keys": keys}, "", "  ")
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if _, err := ParseKeySet(out); err != nil {
		return nil, err
	}
	return out, nil
}
