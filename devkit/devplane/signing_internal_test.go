package devplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
)

func TestThePlanesSigningKeyIsItsOwnAndEachSignatureCarriesAHigherVersion(t *testing.T) {
	dir := t.TempDir()
	c, err := newCatalogueSigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{signingKeyFile, catalogueKeyFile} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want 0600", name, err, info.Mode().Perm())
		}
	}
	keys, err := os.ReadFile(c.keys)
	if err != nil {
		t.Fatal(err)
	}
	set, err := signature.ParseKeySet(keys)
	if err != nil {
		t.Fatal(err)
	}
	artifactPath := filepath.Join(dir, "catalogue.binpb")
	var last uint64
	for i := range 3 {
		data := []byte{byte(i)}
		if err := c.sign(artifactPath, data); err != nil {
			t.Fatal(err)
		}
		env, err := os.ReadFile(signature.EnvelopeLocation(artifactPath))
		if err != nil {
			t.Fatal(err)
		}
		e, err := signature.Parse(env)
		if err != nil {
			t.Fatal(err)
		}
		v, err := signature.Verify(e, artifact.Digest(data), set)
		if err != nil {
			t.Fatal(err)
		}
		if v.Statement.Version <= last {
			t.Fatalf("signature %d carries version %d after %d", i, v.Statement.Version, last)
		}
		last = v.Statement.Version
	}
}
