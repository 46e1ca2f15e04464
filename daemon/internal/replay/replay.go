package replay

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// Spender records that an approval grant was used, once, across every
// replica. Implementations are safe for concurrent use.
type Spender interface {
	// Spend atomically records key as spent by callID, the event id of
	// the call spending it. It returns ErrSpent when key was recorded
	// before, by another call; any other error means the spend cannot be
	// proved, and the caller refuses the call (fail closed). A Spend whose
	// outcome its store leaves unknown resolves it before returning, within
	// ctx: it never reports a spend that did not happen, nor a spend by
	// this call as one by another. So it is idempotent for one callID: a
	// call id is one call's, and its own retry is told its own spend.
	Spend(ctx context.Context, key, callID string) error
	// Spent reports whether key was spent, by any call. It decides
	// nothing on its own: only Spend proves a spend. It lets a caller that
	// holds a grant from a recalled approval tell a grant already used from
	// one still usable (decision 0113).
	Spent(ctx context.Context, key string) (bool, error)
}

// ErrSpent is what Spend returns for a key recorded before.
var ErrSpent = errors.New("replay: the grant was already spent")

// Key is the bucket key of the grant jti issued by issuer: the lowercase hex
// SHA-256 of both, each prefixed by its length as eight big-endian bytes.
// The prefixes make it injective — ("ab", "c") and ("a", "bc") hash
// different inputs — and the hash makes it a valid NATS key-value key of
// fixed length whatever the grant's strings hold. Every replica computes
// the same key for the same grant, so the encoding must never change while
// a bucket holds keys made with it.
func Key(issuer, jti string) string {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(issuer)))
	h.Write(n[:])
	h.Write([]byte(issuer))
	binary.BigEndian.PutUint64(n[:], uint64(len(jti)))
	h.Write(n[:])
	h.Write([]byte(jti))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}
