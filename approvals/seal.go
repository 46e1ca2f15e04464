package approvals

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// SealKeySize is the size of [Config.SealKey]: an AES-256 key.
const SealKeySize = 32

// maxSealed bounds a sealed value read back from a cookie, before it is decoded.
const maxSealed = 2 << 10

// sealAAD is the associated data of every sealed sign-in: a sealed value made for another
// purpose or another version of the format does not open as one.
var sealAAD = []byte("garm-approvals sign-in v1")

// sealer seals values into cookie text with AES-256-GCM, so the browser carries them and cannot
// read or alter them: the server then holds nothing per sign-in under way.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	if len(key) != SealKeySize {
		return nil, errors.New("approvals: the seal key is not 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// seal is v as JSON, encrypted and authenticated under a fresh random nonce, in base64url.
func (s *sealer) seal(v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce) // never fails: crypto/rand crashes the program rather than return an error
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, sealAAD)), nil
}

// open decodes text sealed by seal into v, reporting whether it opened: anything altered,
// truncated, too long or sealed under another key does not.
func (s *sealer) open(text string, v any) bool {
	if text == "" || len(text) > maxSealed {
		return false
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return false
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], sealAAD)
	if err != nil {
		return false
	}
	return json.Unmarshal(plain, v) == nil
}

// login is a sign-in under way, from /login to /callback, sealed into the login cookie: the
// PKCE verifier and nonce never leave the service but sealed, the state is the one the identity
// provider must send back, and next is where the sign-in ends.
type login struct {
	Verifier string `json:"v"`
	Nonce    string `json:"n"`
	State    string `json:"s"`
	Next     string `json:"x"`
	Expires  int64  `json:"e"` // Unix seconds
}

// loginTTL is how long a sign-in may take at the identity provider.
const loginTTL = 10 * time.Minute

// live reports whether l is unexpired at now.
func (l login) live(now time.Time) bool { return now.Unix() < l.Expires }
