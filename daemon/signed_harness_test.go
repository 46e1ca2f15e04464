package garmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	garmd "github.com/garm-dev/garm/daemon"
)

// signedName is the catalogue name the signing tests sign under.
const signedName = "garmd-test"

// signingKeys are catalogue-signing keys made at run time, and the key set
// file garmd reads them from (--catalogue-keys), rewritten by publishKeys.
type signingKeys struct {
	t    testing.TB
	path string
	mu   sync.Mutex
}

func newSigningKeys(t testing.TB) *signingKeys {
	t.Helper()
	return &signingKeys{t: t, path: filepath.Join(t.TempDir(), "catalogue-keys.json")}
}

// newSigner is a new catalogue key of alg (signature.AlgEdDSA or AlgES256).
func newSigner(t testing.TB, alg string) *signature.Signer {
	t.Helper()
	s, _, err := signature.GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// groupOf is a signer and its key group ("" for none).
type groupOf struct {
	signer *signature.Signer
	group  string
}

// publishKeys writes the key set file: these keys and no others.
func (k *signingKeys) publishKeys(keys ...groupOf) {
	k.t.Helper()
	var jwks []map[string]any
	for _, g := range keys {
		j, err := signature.PublicJWK(g.signer.Public(), g.group)
		if err != nil {
			k.t.Fatal(err)
		}
		jwks = append(jwks, j)
	}
	data, err := signature.MarshalKeySet(jwks)
	if err != nil {
		k.t.Fatal(err)
	}
	k.writeRaw(data)
}

// writeRaw writes data as the key set file, whatever it holds.
func (k *signingKeys) writeRaw(data []byte) {
	k.t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	tmp := k.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		k.t.Fatal(err)
	}
	if err := os.Rename(tmp, k.path); err != nil {
		k.t.Fatal(err)
	}
}

// envelope is an envelope over data as version of signedName, by signers.
func envelope(t testing.TB, data []byte, version uint64, signers ...*signature.Signer) *signature.Envelope {
	t.Helper()
	e, err := signature.Sign(signature.Statement{
		Catalogue: signedName, Digest: artifact.Digest(data), Version: version, SignedAt: time.Now(),
	}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// sign is envelope's bytes.
func sign(t testing.TB, data []byte, version uint64, signers ...*signature.Signer) []byte {
	t.Helper()
	return marshalEnvelope(t, envelope(t, data, version, signers...))
}

func marshalEnvelope(t testing.TB, e *signature.Envelope) []byte {
	t.Helper()
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// publishEnvelope puts env beside the catalogue (signature.EnvelopeLocation).
func (c *catalogueStore) publishEnvelope(env []byte) {
	c.t.Helper()
	c.put(signature.EnvelopeLocation(catalogueKey), env)
}

// deleteEnvelope removes the catalogue's envelope.
func (c *catalogueStore) deleteEnvelope() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.client.DeleteObject(ctx, &s3.DeleteObjectInput{
		Bucket: aws.String(catalogueBucket), Key: aws.String(signature.EnvelopeLocation(catalogueKey)),
	}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *catalogueStore) put(key string, data []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(catalogueBucket), Key: aws.String(key), Body: bytes.NewReader(data),
	}); err != nil {
		c.t.Fatal(err)
	}
}

// publishPair publishes a catalogue as the publisher does: the artifact
// first, the envelope last (decision 0133).
func (c *catalogueStore) publishPair(data, env []byte) string {
	c.t.Helper()
	digest := c.publish(data)
	c.publishEnvelope(env)
	return digest
}

// withSignedS3Catalogue serves data with env from the store, polled every
// poll, verifying signatures against keys.
func withSignedS3Catalogue(store *catalogueStore, keys *signingKeys, data, env []byte, poll time.Duration) stackOption {
	return func(c *garmd.Config) {
		store.publishPair(data, env)
		c.Catalogue = catalogueURL
		c.CataloguePoll = poll
		c.CatalogueKeys = keys.path
	}
}

// withSignedFileCatalogue serves data with env from files, verifying
// signatures against keys.
func withSignedFileCatalogue(t testing.TB, keys *signingKeys, data, env []byte) stackOption {
	dir := t.TempDir()
	path := filepath.Join(dir, "catalogue.binpb")
	writeFile(t, path, data)
	writeFile(t, signature.EnvelopeLocation(path), env)
	return func(c *garmd.Config) {
		c.Catalogue = path
		c.CatalogueKeys = keys.path
	}
}

// servingDigest is the digest of the generation that answers a call.
func (s *stack) servingDigest() string {
	s.t.Helper()
	ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`)
	if ans.status != 200 {
		s.t.Fatalf("Add: %d %s", ans.status, ans.body)
	}
	return ans.header.Get("Garm-Catalogue-Digest")
}

// refusals are garmd's log lines refusing a catalogue, as JSON objects.
func (s *stack) refusals() []map[string]any {
	return s.logRecords("garmd: catalogue refused; the serving generation stays")
}

// logRecords are garmd's log lines whose msg is msg.
func (s *stack) logRecords(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}
