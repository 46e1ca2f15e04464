package head

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/garm-dev/garm/ledger/merkle"
)

// messagePrefix starts every signed message: it names what the bytes are,
// so no other signature by the same key can pass for a head.
const messagePrefix = "garm ledger tree head v1\n"

// Head is what a sealer signs.
type Head struct {
	// Size is how many rows the head covers: the first Size leaves of
	// the ledger, in stream order.
	Size uint64
	// Root is the RFC 9162 root of those leaves.
	Root merkle.Hash
	// Time is when the sealer signed it.
	Time time.Time
	// Prev is the hash (Hash) of the head before it; zero for the first.
	Prev merkle.Hash
	// Seq and Offset place the last leaf covered in GARM_LEDGER: the
	// stream message holding it, and how many of that message's rows are
	// covered. Both are zero when Size is.
	Seq    uint64
	Offset uint32
	// KeyID is the thumbprint of the key that signs it.
	KeyID string
}

// Message is the exact bytes signed: one field a line, in a fixed order.
func (h Head) Message() []byte {
	b := []byte(messagePrefix)
	b = append(b, "size "...)
	b = strconv.AppendUint(b, h.Size, 10)
	b = append(b, "\nroot "...)
	b = append(b, h.Root.String()...)
	b = append(b, "\ntime "...)
	b = strconv.AppendInt(b, h.Time.UnixNano(), 10)
	b = append(b, "\nprev "...)
	b = append(b, h.Prev.String()...)
	b = append(b, "\nseq "...)
	b = strconv.AppendUint(b, h.Seq, 10)
	b = append(b, "\noffset "...)
	b = strconv.AppendUint(b, uint64(h.Offset), 10)
	b = append(b, "\nkey "...)
	b = append(b, h.KeyID...)
	return append(b, '\n')
}

// Hash is SHA-256 of Message: what the next head's Prev holds.
func (h Head) Hash() merkle.Hash { return sha256.Sum256(h.Message()) }

// Signed is a head as it is published.
type Signed struct {
	Head
	Signature []byte
	// Frontier is the tree's frontier at Size (merkle.Tree.Frontier);
	// not signed, and checked against Root before use.
	Frontier []merkle.Hash
}

// Sign signs h with key; h.KeyID must be key's id.
func Sign(h Head, key ed25519.PrivateKey, frontier []merkle.Hash) Signed {
	return Signed{Head: h, Signature: ed25519.Sign(key, h.Message()), Frontier: frontier}
}

// ErrSignature is what every refused signature wraps.
var ErrSignature = errors.New("head: signature does not verify")

// Verify checks s's signature with the key of keys its KeyID names.
func (s Signed) Verify(keys Keys) error {
	pub, ok := keys[s.KeyID]
	if !ok {
		return fmt.Errorf("%w: signed by key %q, which the verifier's keys do not hold", ErrSignature, s.KeyID)
	}
	if !ed25519.Verify(pub, s.Message(), s.Signature) {
		return fmt.Errorf("%w: key %q did not sign these bytes", ErrSignature, s.KeyID)
	}
	return nil
}

// ResumeTree is the tree s's frontier rebuilds, refused unless its root is
// s's signed root.
func (s Signed) ResumeTree() (*merkle.Tree, error) {
	t, err := merkle.Resume(s.Size, s.Frontier)
	if err != nil {
		return nil, err
	}
	if t.Root() != s.Root {
		return nil, fmt.Errorf("head: the frontier of the head of size %d does not rebuild its root", s.Size)
	}
	return t, nil
}

// wireSigned is Signed's JSON.
type wireSigned struct {
	Size      uint64   `json:"size"`
	Root      string   `json:"root"`
	Time      string   `json:"time"`
	Prev      string   `json:"prev"`
	Seq       uint64   `json:"seq"`
	Offset    uint32   `json:"offset"`
	KeyID     string   `json:"kid"`
	Signature []byte   `json:"sig"`
	Frontier  []string `json:"frontier,omitempty"`
}

// MarshalJSON writes s with hashes in hexadecimal and the time to the
// nanosecond.
func (s Signed) MarshalJSON() ([]byte, error) {
	w := wireSigned{
		Size: s.Size, Root: s.Root.String(), Time: s.Time.UTC().Format(time.RFC3339Nano), Prev: s.Prev.String(),
		Seq: s.Seq, Offset: s.Offset, KeyID: s.KeyID, Signature: s.Signature,
	}
	for _, f := range s.Frontier {
		w.Frontier = append(w.Frontier, f.String())
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Signed) UnmarshalJSON(b []byte) error {
	var w wireSigned
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var out Signed
	var err error
	if out.Root, err = merkle.ParseHash(w.Root); err != nil {
		return err
	}
	if out.Prev, err = merkle.ParseHash(w.Prev); err != nil {
		return err
	}
	if out.Time, err = time.Parse(time.RFC3339Nano, w.Time); err != nil {
		return err
	}
	for _, f := range w.Frontier {
		h, err := merkle.ParseHash(f)
		if err != nil {
			return err
		}
		out.Frontier = append(out.Frontier, h)
	}
	out.Size, out.Seq, out.Offset, out.KeyID, out.Signature = w.Size, w.Seq, w.Offset, w.KeyID, w.Signature
	*s = out
	return nil
}
