package merkle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
)

// Size is the length of a hash.
const Size = sha256.Size

// The domain-separation prefixes of RFC 9162 §2.1.1.
const (
	leafPrefix = 0x00
	nodePrefix = 0x01
)

// Hash is a SHA-256 digest: a leaf's, a node's or a tree's root.
type Hash [Size]byte

// String is the hash in lower-case hexadecimal.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hash written by String.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != Size {
		return h, fmt.Errorf("merkle: %q is not %d bytes of hexadecimal", s, Size)
	}
	copy(h[:], b)
	return h, nil
}

// EmptyRoot is the root of the tree of no leaves: the hash of the empty
// string (RFC 9162 §2.1.1).
func EmptyRoot() Hash { return sha256.Sum256(nil) }

// LeafHash is MTH({d}) = SHA-256(0x00 || d).
func LeafHash(d []byte) Hash {
	h := sha256.New()
	h.Write([]byte{leafPrefix})
	h.Write(d)
	var out Hash
	h.Sum(out[:0])
	return out
}

// NodeHash is SHA-256(0x01 || left || right).
func NodeHash(left, right Hash) Hash {
	var buf [1 + 2*Size]byte
	buf[0] = nodePrefix
	copy(buf[1:], left[:])
	copy(buf[1+Size:], right[:])
	return sha256.Sum256(buf[:])
}

// Tree is an append-only Merkle tree that keeps only its frontier: the
// roots of the perfect subtrees its leaves form, largest first, one per
// set bit of its size. The zero Tree is empty and ready to use.
type Tree struct {
	size     uint64
	frontier []Hash
}

// Resume is the tree of size leaves whose frontier is frontier, as
// Frontier returned it; it refuses a frontier of the wrong length.
func Resume(size uint64, frontier []Hash) (*Tree, error) {
	if len(frontier) != bits.OnesCount64(size) {
		return nil, fmt.Errorf("merkle: a tree of %d leaves has a frontier of %d hashes, not %d", size, bits.OnesCount64(size), len(frontier))
	}
	return &Tree{size: size, frontier: append([]Hash(nil), frontier...)}, nil
}

// Size is how many leaves the tree holds.
func (t *Tree) Size() uint64 { return t.size }

// Frontier is a copy of the tree's frontier, which Resume takes back.
func (t *Tree) Frontier() []Hash { return append([]Hash(nil), t.frontier...) }

// Append adds the leaf whose hash is leaf (LeafHash of its bytes).
func (t *Tree) Append(leaf Hash) {
	h := leaf
	for s := t.size; s&1 == 1; s >>= 1 {
		last := len(t.frontier) - 1
		h = NodeHash(t.frontier[last], h)
		t.frontier = t.frontier[:last]
	}
	t.frontier = append(t.frontier, h)
	t.size++
}

// Root is MTH of the leaves appended so far.
func (t *Tree) Root() Hash {
	if t.size == 0 {
		return EmptyRoot()
	}
	r := t.frontier[len(t.frontier)-1]
	for i := len(t.frontier) - 2; i >= 0; i-- {
		r = NodeHash(t.frontier[i], r)
	}
	return r
}

// RootOf is MTH of the leaves whose hashes are leaves.
func RootOf(leaves []Hash) Hash {
	var t Tree
	for _, l := range leaves {
		t.Append(l)
	}
	return t.Root()
}

// split is k of RFC 9162 §2.1.1: the largest power of two smaller than n
// (n > 1).
func split(n uint64) uint64 { return 1 << (bits.Len64(n-1) - 1) }

// InclusionProof is PATH(index, leaves) of RFC 9162 §2.1.3.1: the audit
// path of leaf index in the tree of all of leaves.
func InclusionProof(leaves []Hash, index uint64) ([]Hash, error) {
	if index >= uint64(len(leaves)) {
		return nil, fmt.Errorf("merkle: no leaf %d in a tree of %d", index, len(leaves))
	}
	return path(index, leaves), nil
}

func path(m uint64, d []Hash) []Hash {
	n := uint64(len(d))
	if n == 1 {
		return nil
	}
	k := split(n)
	if m < k {
		return append(path(m, d[:k]), RootOf(d[k:]))
	}
	return append(path(m-k, d[k:]), RootOf(d[:k]))
}

// ConsistencyProof is PROOF(m, leaves) of RFC 9162 §2.1.4.1: what shows
// that the tree of the first m leaves is a prefix of the tree of all of
// them. It is empty when m is 0 or the whole tree.
func ConsistencyProof(leaves []Hash, m uint64) ([]Hash, error) {
	n := uint64(len(leaves))
	if m > n {
		return nil, fmt.Errorf("merkle: no tree of %d leaves inside one of %d", m, n)
	}
	if m == 0 || m == n {
		return nil, nil
	}
	return subproof(m, leaves, true), nil
}

func subproof(m uint64, d []Hash, b bool) []Hash {
	n := uint64(len(d))
	if m == n {
		if b {
			return nil
		}
		return []Hash{RootOf(d)}
	}
	k := split(n)
	if m <= k {
		return append(subproof(m, d[:k], b), RootOf(d[k:]))
	}
	return append(subproof(m-k, d[k:], false), RootOf(d[:k]))
}

// ErrProof is what every failed verification wraps.
var ErrProof = errors.New("merkle: proof does not verify")

// VerifyInclusion runs RFC 9162 §2.1.3.2: does proof show that leaf is
// leaf index of the tree of size leaves whose root is root?
func VerifyInclusion(index, size uint64, leaf Hash, proof []Hash, root Hash) error {
	if index >= size {
		return fmt.Errorf("%w: leaf %d is outside a tree of %d", ErrProof, index, size)
	}
	fn, sn, r := index, size-1, leaf
	for _, p := range proof {
		if sn == 0 {
			return fmt.Errorf("%w: the path is longer than the tree is deep", ErrProof)
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: the path is shorter than the tree is deep", ErrProof)
	}
	if r != root {
		return fmt.Errorf("%w: the path leads to %s, not the root %s", ErrProof, r, root)
	}
	return nil
}

// VerifyConsistency runs RFC 9162 §2.1.4.2: does proof show that the tree
// of size1 leaves with root root1 is a prefix of the tree of size2 leaves
// with root root2? Equal sizes need an empty proof and equal roots; size1
// 0 needs an empty proof.
func VerifyConsistency(size1, size2 uint64, root1, root2 Hash, proof []Hash) error {
	switch {
	case size1 > size2:
		return fmt.Errorf("%w: a tree of %d cannot be a prefix of one of %d", ErrProof, size1, size2)
	case size1 == size2:
		if len(proof) != 0 {
			return fmt.Errorf("%w: trees of equal size need an empty proof", ErrProof)
		}
		if root1 != root2 {
			return fmt.Errorf("%w: two trees of %d leaves with different roots", ErrProof, size1)
		}
		return nil
	case size1 == 0:
		if len(proof) != 0 {
			return fmt.Errorf("%w: the empty tree needs an empty proof", ErrProof)
		}
		return nil
	case len(proof) == 0:
		return fmt.Errorf("%w: the proof is empty", ErrProof)
	}
	cp := proof
	if size1&(size1-1) == 0 {
		cp = append([]Hash{root1}, proof...)
	}
	fn, sn := size1-1, size2-1
	for fn&1 == 1 {
		fn >>= 1
		sn >>= 1
	}
	fr, sr := cp[0], cp[0]
	for _, c := range cp[1:] {
		if sn == 0 {
			return fmt.Errorf("%w: the proof is longer than the trees need", ErrProof)
		}
		if fn&1 == 1 || fn == sn {
			fr = NodeHash(c, fr)
			sr = NodeHash(c, sr)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			sr = NodeHash(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return fmt.Errorf("%w: the proof is shorter than the trees need", ErrProof)
	}
	if fr != root1 {
		return fmt.Errorf("%w: it leads to %s for the first tree, not %s", ErrProof, fr, root1)
	}
	if sr != root2 {
		return fmt.Errorf("%w: it leads to %s for the second tree, not %s", ErrProof, sr, root2)
	}
	return nil
}
