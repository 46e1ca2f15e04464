package head_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/merkle"
)

func newSigner(t *testing.T) head.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := head.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sampleHead(s head.Signer) head.Signed {
	var tree merkle.Tree
	for _, b := range []string{"a", "b", "c"} {
		tree.Append(merkle.LeafHash([]byte(b)))
	}
	h := head.Head{Size: 3, Root: tree.Root(), Time: time.Unix(1_700_000_000, 123), Prev: merkle.LeafHash([]byte("prev")), Seq: 2, Offset: 1, KeyID: s.KeyID}
	return head.Sign(h, s.Key, tree.Frontier())
}

func TestAHeadSurvivesJSONAndVerifiesWithItsJWKS(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	jwks, err := head.JWKS(s.Key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := head.ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(sampleHead(s))
	if err != nil {
		t.Fatal(err)
	}
	var got head.Signed
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if err := got.Verify(keys); err != nil {
		t.Fatal(err)
	}
	if _, err := got.ResumeTree(); err != nil {
		t.Fatal(err)
	}
}

func TestEveryFieldOfAHeadIsSigned(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	keys := head.Keys{s.KeyID: s.Key.Public().(ed25519.PublicKey)}
	edits := map[string]func(*head.Signed){
		"size":   func(h *head.Signed) { h.Size++ },
		"root":   func(h *head.Signed) { h.Root[0] ^= 1 },
		"time":   func(h *head.Signed) { h.Time = h.Time.Add(time.Nanosecond) },
		"prev":   func(h *head.Signed) { h.Prev[31] ^= 1 },
		"seq":    func(h *head.Signed) { h.Seq++ },
		"offset": func(h *head.Signed) { h.Offset++ },
	}
	for name, edit := range edits {
		h := sampleHead(s)
		edit(&h)
		if err := h.Verify(keys); !errors.Is(err, head.ErrSignature) {
			t.Errorf("a head whose %s was edited: %v", name, err)
		}
	}
}

func TestAHeadSignedByAnotherKeyIsRefused(t *testing.T) {
	t.Parallel()
	mine, theirs := newSigner(t), newSigner(t)
	keys := head.Keys{mine.KeyID: mine.Key.Public().(ed25519.PublicKey)}
	forged := sampleHead(theirs)
	if err := forged.Verify(keys); !errors.Is(err, head.ErrSignature) {
		t.Fatalf("a head by an unknown key: %v", err)
	}
	forged.KeyID = mine.KeyID
	forged = head.Sign(forged.Head, theirs.Key, nil)
	if err := forged.Verify(keys); !errors.Is(err, head.ErrSignature) {
		t.Fatalf("a head naming my key, signed by another: %v", err)
	}
}

func TestAFrontierThatDoesNotRebuildTheRootIsRefused(t *testing.T) {
	t.Parallel()
	h := sampleHead(newSigner(t))
	h.Frontier[0][0] ^= 1
	if _, err := h.ResumeTree(); err == nil {
		t.Fatal("a frontier with a changed hash was taken")
	}
}

func TestAKeyFileIsWrittenOnceAndReadBack(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sealer.pem")
	made, err := head.GenerateKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := head.GenerateKeyFile(path); err == nil {
		t.Fatal("an existing key file was overwritten")
	}
	read, err := head.LoadSigner(path)
	if err != nil {
		t.Fatal(err)
	}
	if read.KeyID != made.KeyID || !read.Key.Equal(made.Key) {
		t.Fatal("the key read back differs")
	}
}

func TestAJWKSWhoseKidIsNotTheThumbprintIsRefused(t *testing.T) {
	t.Parallel()
	s := newSigner(t)
	jwks, _ := head.JWKS(s.Key.Public().(ed25519.PublicKey))
	var set map[string][]map[string]any
	_ = json.Unmarshal(jwks, &set)
	set["keys"][0]["kid"] = "someone-else"
	b, _ := json.Marshal(set)
	if _, err := head.ParseJWKS(b); err == nil {
		t.Fatal("a JWKS naming a key wrongly was taken")
	}
}
