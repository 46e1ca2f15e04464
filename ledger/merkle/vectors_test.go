package merkle_test

import (
	"testing"

	"github.com/garm-dev/garm/ledger/merkle"
)

// The eight leaves of the test vectors Certificate Transparency
// implementations share (RFC 6962's reference code, and after it RFC 9162
// implementations), with the roots of their first n leaves.
var vectorLeaves = [][]byte{
	{},
	{0x00},
	{0x10},
	{0x20, 0x21},
	{0x30, 0x31},
	{0x40, 0x41, 0x42, 0x43},
	{0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57},
	{0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f},
}

var vectorRoots = []string{
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}

var inclusionVectors = []struct {
	index, size uint64
	path        []string
}{
	{0, 1, nil},
	{0, 8, []string{
		"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	}},
	{5, 8, []string{
		"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
		"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	}},
	{2, 3, []string{
		"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	}},
	{1, 5, []string{
		"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
	}},
}

var consistencyVectors = []struct {
	size1, size2 uint64
	proof        []string
}{
	{1, 1, nil},
	{1, 8, []string{
		"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	}},
	{6, 8, []string{
		"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
		"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	}},
	{2, 5, []string{
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
	}},
}

func vectorHashes() []merkle.Hash {
	out := make([]merkle.Hash, len(vectorLeaves))
	for i, l := range vectorLeaves {
		out[i] = merkle.LeafHash(l)
	}
	return out
}

func hashes(t *testing.T, hex []string) []merkle.Hash {
	t.Helper()
	out := make([]merkle.Hash, len(hex))
	for i, s := range hex {
		h, err := merkle.ParseHash(s)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = h
	}
	return out
}

func TestTheEmptyTreesRootIsTheHashOfNothing(t *testing.T) {
	t.Parallel()
	if got, want := merkle.EmptyRoot().String(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Fatalf("empty root %s, want %s", got, want)
	}
	var tree merkle.Tree
	if tree.Root() != merkle.EmptyRoot() {
		t.Fatal("the zero Tree's root is not the empty root")
	}
}

func TestTheTreesRootsAreTheVectorRoots(t *testing.T) {
	t.Parallel()
	leaves := vectorHashes()
	var tree merkle.Tree
	for i, l := range leaves {
		tree.Append(l)
		if got := tree.Root().String(); got != vectorRoots[i] {
			t.Errorf("root of %d leaves %s, want %s", i+1, got, vectorRoots[i])
		}
		if got := merkle.RootOf(leaves[:i+1]).String(); got != vectorRoots[i] {
			t.Errorf("RootOf %d leaves %s, want %s", i+1, got, vectorRoots[i])
		}
	}
}

func TestInclusionProofsAreTheVectorPaths(t *testing.T) {
	t.Parallel()
	leaves := vectorHashes()
	for _, v := range inclusionVectors {
		want := hashes(t, v.path)
		got, err := merkle.InclusionProof(leaves[:v.size], v.index)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("leaf %d of %d: %d hashes, want %d", v.index, v.size, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("leaf %d of %d, hash %d: %s, want %s", v.index, v.size, i, got[i], want[i])
			}
		}
		root := hashes(t, vectorRoots[v.size-1:v.size])[0]
		if err := merkle.VerifyInclusion(v.index, v.size, leaves[v.index], want, root); err != nil {
			t.Errorf("leaf %d of %d: the vector path does not verify: %v", v.index, v.size, err)
		}
	}
}

func TestConsistencyProofsAreTheVectorProofs(t *testing.T) {
	t.Parallel()
	leaves := vectorHashes()
	roots := hashes(t, vectorRoots)
	for _, v := range consistencyVectors {
		want := hashes(t, v.proof)
		got, err := merkle.ConsistencyProof(leaves[:v.size2], v.size1)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d→%d: %d hashes, want %d", v.size1, v.size2, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%d→%d, hash %d: %s, want %s", v.size1, v.size2, i, got[i], want[i])
			}
		}
		if err := merkle.VerifyConsistency(v.size1, v.size2, roots[v.size1-1], roots[v.size2-1], want); err != nil {
			t.Errorf("%d→%d: the vector proof does not verify: %v", v.size1, v.size2, err)
		}
	}
}
