package merkle_test

import (
	"encoding/binary"
	"testing"

	"github.com/garm-dev/garm/ledger/merkle"
)

func numberedLeaves(n int) []merkle.Hash {
	out := make([]merkle.Hash, n)
	for i := range out {
		out[i] = merkle.LeafHash(binary.BigEndian.AppendUint64(nil, uint64(i)))
	}
	return out
}

func TestEveryProofOfEveryTreeUpTo40LeavesVerifiesAndAFlippedOneDoesNot(t *testing.T) {
	t.Parallel()
	leaves := numberedLeaves(40)
	for n := 1; n <= len(leaves); n++ {
		root := merkle.RootOf(leaves[:n])
		for i := 0; i < n; i++ {
			p, err := merkle.InclusionProof(leaves[:n], uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			if err := merkle.VerifyInclusion(uint64(i), uint64(n), leaves[i], p, root); err != nil {
				t.Fatalf("leaf %d of %d: %v", i, n, err)
			}
			if n > 1 && merkle.VerifyInclusion(uint64((i+1)%n), uint64(n), leaves[i], p, root) == nil {
				t.Fatalf("leaf %d of %d verifies at the wrong index", i, n)
			}
			for j := range p {
				bad := append([]merkle.Hash(nil), p...)
				bad[j][0] ^= 1
				if merkle.VerifyInclusion(uint64(i), uint64(n), leaves[i], bad, root) == nil {
					t.Fatalf("leaf %d of %d verifies with hash %d flipped", i, n, j)
				}
			}
		}
		for m := 1; m < n; m++ {
			p, err := merkle.ConsistencyProof(leaves[:n], uint64(m))
			if err != nil {
				t.Fatal(err)
			}
			old := merkle.RootOf(leaves[:m])
			if err := merkle.VerifyConsistency(uint64(m), uint64(n), old, root, p); err != nil {
				t.Fatalf("%d→%d: %v", m, n, err)
			}
			for j := range p {
				bad := append([]merkle.Hash(nil), p...)
				bad[j][0] ^= 1
				if merkle.VerifyConsistency(uint64(m), uint64(n), old, root, bad) == nil {
					t.Fatalf("%d→%d verifies with hash %d flipped", m, n, j)
				}
			}
			other := merkle.RootOf(append(append([]merkle.Hash(nil), leaves[:m-1]...), merkle.LeafHash([]byte("edited"))))
			if merkle.VerifyConsistency(uint64(m), uint64(n), other, root, p) == nil {
				t.Fatalf("%d→%d verifies from a tree whose last leaf was edited", m, n)
			}
		}
	}
}

func TestATreeResumedFromItsFrontierGrowsAsTheOriginal(t *testing.T) {
	t.Parallel()
	leaves := numberedLeaves(100)
	var whole merkle.Tree
	for i, l := range leaves {
		whole.Append(l)
		if i == 36 {
			resumed, err := merkle.Resume(whole.Size(), whole.Frontier())
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range leaves[i+1:] {
				resumed.Append(m)
			}
			if resumed.Root() != merkle.RootOf(leaves) {
				t.Fatal("the resumed tree's root differs")
			}
		}
	}
	if _, err := merkle.Resume(39, whole.Frontier()); err == nil {
		t.Fatal("a frontier of the wrong length was taken")
	}
}

// FuzzVerification feeds the verifiers arbitrary proofs: they must never
// panic, and never accept a proof for a leaf or a tree that is not the one
// the proof was made for.
func FuzzVerification(f *testing.F) {
	f.Add(uint64(3), uint64(7), uint64(5), []byte{1, 2, 3}, byte(0))
	f.Add(uint64(0), uint64(1), uint64(1), []byte{}, byte(9))
	f.Add(uint64(31), uint64(32), uint64(17), []byte{0xff}, byte(200))
	leaves := numberedLeaves(64)
	f.Fuzz(func(t *testing.T, index, size, size1 uint64, raw []byte, flip byte) {
		var proof []merkle.Hash
		for len(raw) >= 1 && len(proof) < 70 {
			proof = append(proof, merkle.LeafHash(raw[:1]))
			raw = raw[1:]
		}
		var root merkle.Hash
		root[0] = flip
		_ = merkle.VerifyInclusion(index, size, leaves[0], proof, root)
		_ = merkle.VerifyConsistency(size1, size, root, root, proof)

		n := size%64 + 1
		i := index % n
		m := size1%n + 1
		good, _ := merkle.InclusionProof(leaves[:n], i)
		rootN := merkle.RootOf(leaves[:n])
		if err := merkle.VerifyInclusion(i, n, leaves[i], good, rootN); err != nil {
			t.Fatal(err)
		}
		wrong := leaves[i]
		wrong[int(flip)%merkle.Size] ^= 1 | flip
		if merkle.VerifyInclusion(i, n, wrong, good, rootN) == nil {
			t.Fatalf("leaf %d of %d verified with a changed leaf", i, n)
		}
		cons, _ := merkle.ConsistencyProof(leaves[:n], m)
		rootM := merkle.RootOf(leaves[:m])
		if err := merkle.VerifyConsistency(m, n, rootM, rootN, cons); err != nil {
			t.Fatal(err)
		}
		if m < n && merkle.VerifyConsistency(m, n, rootM, wrong, cons) == nil {
			t.Fatalf("%d→%d verified against a changed root", m, n)
		}
	})
}

// BenchmarkAppend is the sealer's cost per row: hashing the row's bytes
// (a typical ledger row is some hundreds of bytes) and appending it.
func BenchmarkAppend(b *testing.B) {
	row := make([]byte, 400)
	var tree merkle.Tree
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		binary.BigEndian.PutUint64(row, uint64(i))
		tree.Append(merkle.LeafHash(row))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkRoot(b *testing.B) {
	var tree merkle.Tree
	for _, l := range numberedLeaves(1_000_003) {
		tree.Append(l)
	}
	for b.Loop() {
		_ = tree.Root()
	}
}
