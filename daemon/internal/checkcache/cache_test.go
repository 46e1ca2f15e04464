package checkcache_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/checkcache"
)

var identity = []byte("build-id-one/content")

func keys(n int) []artifact.FileKey {
	out := make([]artifact.FileKey, n)
	for i := range out {
		out[i] = sha256.Sum256([]byte{byte(i), byte(i >> 8)})
	}
	return out
}

// checksOf are n file keys and the first v of them validated.
func checksOf(n, v int) checkcache.Checks {
	k := keys(n)
	return checkcache.Checks{Files: k, Validated: k[:v]}
}

func open(t *testing.T, dir string, id []byte) *checkcache.Cache {
	t.Helper()
	c, err := checkcache.OpenAs(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readBack is what a new process of identity id reads from dir: the checks
// it wrote, or the error.
func readBack(t *testing.T, dir string, id []byte, want checkcache.Checks) error {
	t.Helper()
	got, err := open(t, dir, id).Read()
	if err != nil {
		if got.Files != nil || got.Validated != nil {
			t.Fatalf("a record refused (%v) still vouches for %d and %d keys", err, len(got.Files), len(got.Validated))
		}
		return err
	}
	if !slices.Equal(got.Files, want.Files) || !slices.Equal(got.Validated, want.Validated) {
		t.Fatalf("read back %d and %d keys, %d and %d recorded", len(got.Files), len(got.Validated), len(want.Files), len(want.Validated))
	}
	return nil
}

func TestARecordIsReadBackByTheSameExecutableOfTheSameDeployment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c := open(t, dir, identity)
	if checks, err := c.Read(); checks.Files != nil || checks.Validated != nil || err != nil {
		t.Fatalf("a new cache vouches for %v (%v)", checks, err)
	}
	for _, p := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {filepath.Join(dir, "key"), 0o600}} {
		info, err := os.Stat(p.path)
		if err != nil || info.Mode().Perm() != p.mode {
			t.Fatalf("%s: %v, %v", p.path, info.Mode(), err)
		}
	}
	want := checksOf(300, 120)
	if wrote, err := c.Write(want); !wrote || err != nil {
		t.Fatalf("recorded: %v, %v", wrote, err)
	}
	if wrote, err := c.Write(want); wrote || err != nil {
		t.Fatalf("the same keys written again: %v, %v", wrote, err)
	}
	if err := readBack(t, dir, identity, want); err != nil {
		t.Fatal(err)
	}
	again := open(t, dir, identity)
	if _, err := again.Read(); err != nil {
		t.Fatal(err)
	}
	if wrote, _ := again.Write(want); wrote {
		t.Fatal("a restart rewrote the record it read")
	}
	for _, other := range []checkcache.Checks{checksOf(10, 10), checksOf(10, 0), {}} {
		if wrote, err := again.Write(other); !wrote || err != nil {
			t.Fatalf("other keys not recorded: %v, %v", wrote, err)
		}
		if err := readBack(t, dir, identity, other); err != nil {
			t.Fatal(err)
		}
	}
}

func TestARecordIsNotUsedUnlessItsMACAndWriterHold(t *testing.T) {
	cases := map[string]struct {
		spoil  func(t *testing.T, dir string)
		id     []byte
		refuse string
	}{
		"another executable wrote it": {id: []byte("build-id-two/content"), refuse: "another executable"},
		"another deployment's key": {spoil: func(t *testing.T, dir string) {
			other := filepath.Join(t.TempDir(), "other")
			open(t, other, identity)
			key, err := os.ReadFile(filepath.Join(other, "key"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "key"), key, 0o600); err != nil {
				t.Fatal(err)
			}
		}, refuse: "MAC does not verify"},
		"a key flipped":        {spoil: flip(-40), refuse: "MAC does not verify"},
		"the MAC flipped":      {spoil: flip(-1), refuse: "MAC does not verify"},
		"the identity flipped": {spoil: flip(len("garm check cache 2\n") + 3), refuse: "MAC does not verify"},
		"truncated": {spoil: func(t *testing.T, dir string) {
			rewrite(t, dir, func(b []byte) []byte { return b[:len(b)-5] })
		}, refuse: "MAC does not verify"},
		"empty": {spoil: func(t *testing.T, dir string) {
			rewrite(t, dir, func([]byte) []byte { return nil })
		}, refuse: "truncated"},
		"larger than a catalogue can need": {spoil: func(t *testing.T, dir string) {
			rewrite(t, dir, func(b []byte) []byte { return append(b, make([]byte, 40<<20)...) })
		}, refuse: "larger than"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := open(t, dir, identity).Write(checksOf(100, 40)); err != nil {
				t.Fatal(err)
			}
			if tc.spoil != nil {
				tc.spoil(t, dir)
			}
			id := identity
			if tc.id != nil {
				id = tc.id
			}
			err := readBack(t, dir, id, checkcache.Checks{})
			if err == nil || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("read back: %v, want a refusal saying %q", err, tc.refuse)
			}
		})
	}
}

func flip(at int) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		rewrite(t, dir, func(b []byte) []byte {
			i := at
			if i < 0 {
				i += len(b)
			}
			b[i] ^= 1
			return b
		})
	}
}

func rewrite(t *testing.T, dir string, change func([]byte) []byte) {
	t.Helper()
	path := filepath.Join(dir, checkcache.RecordName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, change(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestACacheOthersCanReachIsNotOpened(t *testing.T) {
	t.Run("a directory others may write to", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Chmod(dir, 0o775); err != nil {
			t.Fatal(err)
		}
		if _, err := checkcache.OpenAs(dir, identity); err == nil || !strings.Contains(err.Error(), "open to others") {
			t.Fatalf("opened: %v", err)
		}
	})
	t.Run("a key others may read", func(t *testing.T) {
		dir := t.TempDir()
		open(t, dir, identity)
		if err := os.Chmod(filepath.Join(dir, "key"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := checkcache.OpenAs(dir, identity); err == nil || !strings.Contains(err.Error(), "open to others") {
			t.Fatalf("opened: %v", err)
		}
	})
	t.Run("a key that is a link", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		open(t, elsewhere, identity)
		if err := os.Symlink(filepath.Join(elsewhere, "key"), filepath.Join(dir, "key")); err != nil {
			t.Fatal(err)
		}
		if _, err := checkcache.OpenAs(dir, identity); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Fatalf("opened: %v", err)
		}
	})
	t.Run("a key of the wrong size", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "key"), []byte("short"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := checkcache.OpenAs(dir, identity); err == nil || !strings.Contains(err.Error(), "not a key") {
			t.Fatalf("opened: %v", err)
		}
	})
	t.Run("no build ID", func(t *testing.T) {
		if _, err := checkcache.OpenAs(t.TempDir(), nil); err == nil {
			t.Fatal("opened for an executable with no identity")
		}
	})
}

func TestGarmdsOpeningOneNewCacheAtOnceAgreeOnItsKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var wg sync.WaitGroup
	caches := make([]*checkcache.Cache, 8)
	for i := range caches {
		wg.Go(func() {
			c, err := checkcache.OpenAs(dir, identity)
			if err != nil {
				t.Error(err)
			}
			caches[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := checksOf(5, 2)
	if _, err := caches[0].Write(want); err != nil {
		t.Fatal(err)
	}
	for i, c := range caches {
		if got, err := c.Read(); err != nil || len(got.Files) != 5 || len(got.Validated) != 2 {
			t.Fatalf("cache %d reads %v (%v)", i, got, err)
		}
	}
}

func TestThisExecutableHasAnIdentity(t *testing.T) {
	id, err := checkcache.ExecutableIdentity()
	if err != nil || len(id) == 0 || bytes.ContainsRune(id, 0) {
		t.Fatalf("identity %q: %v", id, err)
	}
	again, _ := checkcache.ExecutableIdentity()
	if !bytes.Equal(id, again) {
		t.Fatal("the identity changed")
	}
}
