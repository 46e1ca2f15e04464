package devplane

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/internal/atomicfile"
)

// signedName is the catalogue name the dev plane signs its catalogues
// under.
const signedName = "garm-dev"

// cataloguePath's key files, in the run directory.
const (
	signingKeyFile   = "catalogue-signing.pem"
	catalogueKeyFile = "catalogue-keys.json"
)

// catalogueSigner signs every catalogue the plane serves with a key it
// generated (issue 36 §4), so garmd always runs with --catalogue-keys and
// the verifying path is exercised on every run and every rebuild.
type catalogueSigner struct {
	signer *signature.Signer
	// keys is the key set file garmd reads (--catalogue-keys).
	keys string
	// last is the version last signed.
	last uint64
}

// newCatalogueSigner generates the plane's catalogue key, writes it (0600)
// and its key set into dir.
func newCatalogueSigner(dir string) (*catalogueSigner, error) {
	s, pemBytes, err := signature.GenerateKey(signature.AlgEdDSA)
	if err != nil {
		return nil, fmt.Errorf("generating the catalogue signing key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, signingKeyFile), pemBytes, 0o600); err != nil {
		return nil, err
	}
	jwk, err := signature.PublicJWK(s.Public(), "")
	if err != nil {
		return nil, err
	}
	set, err := signature.MarshalKeySet([]map[string]any{jwk})
	if err != nil {
		return nil, err
	}
	keys := filepath.Join(dir, catalogueKeyFile)
	if err := os.WriteFile(keys, set, 0o600); err != nil {
		return nil, err
	}
	return &catalogueSigner{signer: s, keys: keys}, nil
}

// sign writes the envelope of the artifact at path beside it
// (signature.EnvelopeLocation), with a version above every one signed
// before: the time in seconds, or the last version plus one when two
// builds share a second. A version from the clock is also above what a
// reused --data directory's bus remembers from an earlier run.
func (c *catalogueSigner) sign(path string, data []byte) error {
	c.last = max(c.last+1, uint64(time.Now().Unix()))
	e, err := signature.Sign(signature.Statement{
		Catalogue: signedName, Digest: artifact.Digest(data), Version: c.last, SignedAt: time.Now(),
	}, c.signer)
	if err != nil {
		return fmt.Errorf("signing the catalogue: %w", err)
	}
	env, err := e.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.Write(signature.EnvelopeLocation(path), env, 0o600)
}
