package verify

import (
	"errors"
	"fmt"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
)

// Head is a head as the verifier is given it.
type Head struct {
	// Name says where it came from, for messages: "head message 7".
	Name string
	Head head.Signed
	// Err is why it could not be read; such a head fails.
	Err error
}

// ErrFailed is what every failure wraps.
var ErrFailed = errors.New("the ledger does not verify")

// Verifier checks rows against heads as they are fed to it.
type Verifier struct {
	heads []Head
	tree  merkle.Tree
	next  int
	// first is the first row after the last head matched; last the last
	// row seen.
	first, last rows.Row
}

// New checks every head's signature with keys and the heads' chain, and
// returns a verifier for their rows; the error names the first head that
// fails.
func New(keys head.Keys, heads []Head) (*Verifier, error) {
	var prev *head.Signed
	for i := range heads {
		h := &heads[i]
		fail := func(format string, a ...any) error {
			return fmt.Errorf("%w: %s (size %d): %s", ErrFailed, h.Name, h.Head.Size, fmt.Sprintf(format, a...))
		}
		if h.Err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrFailed, h.Name, h.Err)
		}
		if err := h.Head.Verify(keys); err != nil {
			return nil, fail("%v", err)
		}
		if h.Head.Size == 0 && h.Head.Root != merkle.EmptyRoot() {
			return nil, fail("it covers no row but its root is not the empty tree's")
		}
		if prev == nil {
			if h.Head.Prev != (merkle.Hash{}) {
				return nil, fail("it is the first head but chains to %s: the heads before it are missing", h.Head.Prev)
			}
		} else {
			if h.Head.Prev != prev.Hash() {
				return nil, fail("it does not chain to the head before it (a head was removed, inserted or reordered)")
			}
			if h.Head.Size < prev.Size {
				return nil, fail("it covers fewer rows than the head before it (%d)", prev.Size)
			}
			if h.Head.Size == prev.Size && h.Head.Root != prev.Root {
				return nil, fail("it covers as many rows as the head before it with a different root")
			}
			if h.Head.Time.Before(prev.Time) {
				return nil, fail("it is older than the head before it")
			}
		}
		prev = &h.Head
	}
	v := &Verifier{heads: heads}
	v.skipEmpty()
	return v, nil
}

// skipEmpty passes the heads of size 0, whose roots New checked.
func (v *Verifier) skipEmpty() {
	for v.next < len(v.heads) && v.heads[v.next].Head.Size == 0 {
		v.next++
	}
}

// Row appends the next row and checks every head its size reaches.
func (v *Verifier) Row(r rows.Row) error {
	if v.tree.Size() == 0 || v.next > 0 && v.tree.Size() == v.heads[v.next-1].Head.Size {
		v.first = r
	}
	v.tree.Append(r.Leaf)
	v.last = r
	for v.next < len(v.heads) && v.heads[v.next].Head.Size == v.tree.Size() {
		h := v.heads[v.next]
		samePlace := r.Seq == 0 || (r.Seq == h.Head.Seq && r.Index+1 == h.Head.Offset)
		if v.tree.Root() != h.Head.Root {
			what := "a row among them was edited, or rows among them reordered"
			if !samePlace {
				what = fmt.Sprintf("rows were dropped or added: the head ends at stream message %d row %d", h.Head.Seq, h.Head.Offset-1)
			}
			return fmt.Errorf("%w: %s (size %d) does not match rows %d–%d (from %s to %s): %s",
				ErrFailed, h.Name, h.Head.Size, v.first.N, r.N, v.first, r, what)
		}
		if !samePlace {
			return fmt.Errorf("%w: %s (size %d) ends at stream message %d row %d, but its last row is %s: stream messages were renumbered",
				ErrFailed, h.Name, h.Head.Size, h.Head.Seq, h.Head.Offset-1, r)
		}
		v.next++
	}
	return nil
}

// Summary is what a verification covered.
type Summary struct {
	Rows, Heads uint64
	// Unsealed is how many rows follow the last head.
	Unsealed uint64
	// Last is the last head, when there is one.
	Last *head.Signed
}

// Finish says whether the rows reached every head and, unless allowTail,
// whether every row is covered by one.
func (v *Verifier) Finish(allowTail bool) (Summary, error) {
	s := Summary{Rows: v.tree.Size(), Heads: uint64(len(v.heads))}
	var covered uint64
	if len(v.heads) > 0 {
		s.Last = &v.heads[len(v.heads)-1].Head
		covered = s.Last.Size
	}
	if v.next < len(v.heads) {
		h := v.heads[v.next]
		return s, fmt.Errorf("%w: the rows end after %d, but %s covers %d: rows %d–%d are missing (dropped, or not read)",
			ErrFailed, v.tree.Size(), h.Name, h.Head.Size, v.tree.Size(), h.Head.Size-1)
	}
	if v.tree.Size() > covered {
		s.Unsealed = v.tree.Size() - covered
		if !allowTail {
			return s, fmt.Errorf("%w: rows %d–%d (from %s) are covered by no head", ErrFailed, covered, v.tree.Size()-1, v.first)
		}
	}
	return s, nil
}
