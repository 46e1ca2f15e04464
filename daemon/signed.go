package garmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
)

// transitPause is how long garmd waits at start before reading a pair
// again whose artifact and envelope do not match: a publication caught
// between its two writes settles within it.
const transitPause = time.Second

// noEnvelope stands for a missing envelope in a pair's state.
const noEnvelope = "-"

// pairSources are a catalogue's artifact and its envelope, beside it
// (signature.EnvelopeLocation).
type pairSources struct {
	artifact, envelope source.Source
}

func openPair(ctx context.Context, location string) (pairSources, error) {
	art, err := source.Open(ctx, location)
	if err != nil {
		return pairSources{}, err
	}
	env, err := source.Open(ctx, signature.EnvelopeLocation(location))
	if err != nil {
		return pairSources{}, err
	}
	return pairSources{artifact: art, envelope: env}, nil
}

// pairState is what the store says of both objects: the artifact's ETag
// and the envelope's, or noEnvelope.
func pairState(artifactETag, envelopeETag string) string { return artifactETag + " " + envelopeETag }

// head is the pair's state now, without reading either object.
func (p pairSources) head(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, headTimeout)
	defer cancel()
	art, err := p.artifact.Head(ctx)
	if err != nil {
		return "", err
	}
	env, err := p.envelope.Head(ctx)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		env = noEnvelope
	case err != nil:
		return "", err
	}
	return pairState(art, env), nil
}

// read reads and verifies the pair through gate (signature.ReadPair's
// order), and returns the state of what it read.
func (p pairSources) read(ctx context.Context, gate *signed.Gate) (*signature.Pair, string, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	artTag, envTag := "", noEnvelope
	readEnvelope := func(ctx context.Context) ([]byte, error) {
		data, etag, err := p.envelope.Fetch(ctx)
		if err != nil {
			envTag = noEnvelope
			return nil, err
		}
		envTag = etag
		return data, nil
	}
	readArtifact := func(ctx context.Context) ([]byte, error) {
		data, etag, err := p.artifact.Fetch(ctx)
		artTag = etag
		return data, err
	}
	pair, err := gate.Read(ctx, readEnvelope, readArtifact)
	return pair, pairState(artTag, envTag), err
}

// newGate is the catalogue gate --catalogue-keys configures, without its
// bus record yet (useVersions).
func newGate(cfg Config) *signed.Gate {
	return signed.New(signed.Config{
		Keys:       signed.NewKeys(cfg.CatalogueKeys, nil),
		Policy:     cfg.policy(),
		Name:       cfg.CatalogueName,
		RollbackTo: cfg.CatalogueAllowRollbackTo,
	})
}

// readSignedCatalogue is readCatalogue with --catalogue-keys: the artifact
// is read with its envelope and loaded only when they verify. A pair that
// does not match is read once more after transitPause, in case garmd
// started in the middle of a publication; then it is refused.
func readSignedCatalogue(ctx context.Context, location string, o catalogue.Options, gate *signed.Gate) (*catalogue.Generation, *signature.Pair, string, error) {
	p, err := openPair(ctx, location)
	if err != nil {
		return nil, nil, "", err
	}
	var transit signature.Transit
	pair, state, err := p.read(ctx, gate)
	if err != nil && !transit.Settled(err) {
		select {
		case <-ctx.Done():
			return nil, nil, "", ctx.Err()
		case <-time.After(transitPause):
		}
		pair, state, err = p.read(ctx, gate)
	}
	if err != nil {
		return nil, nil, "", describeRefusal(err)
	}
	gen, err := catalogue.Load(pair.Artifact, o)
	if err != nil {
		return nil, nil, "", err
	}
	gen.Signed = signed.Describe(pair)
	return gen, pair, state, nil
}

// describeRefusal puts the check a refusal failed and the digest refused
// in its message, for the refusal to start.
func describeRefusal(err error) error {
	var r *signed.Refusal
	if err == nil {
		return nil
	}
	if !errors.As(err, &r) {
		return err
	}
	return fmt.Errorf("the signatures are refused (check %s, digest %s): %w", r.Check, r.Digest, err)
}

// openVersions binds the bus's record of the highest catalogue versions
// (refusing an unfenced bucket) and gives it to the gate.
func (d *Daemon) openVersions(ctx context.Context) error {
	js, err := d.jetStream()
	if err != nil {
		return fmt.Errorf("--catalogue-keys: %w", err)
	}
	checkCtx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	store, err := versions.Open(checkCtx, js)
	if err != nil {
		return fmt.Errorf("--catalogue-keys: %w", err)
	}
	d.gate.UseVersions(store)
	return nil
}

// judgeFirst refuses to start on a first generation whose version the
// bus's record does not allow, before it is mounted.
func (d *Daemon) judgeFirst(ctx context.Context, pair *signature.Pair) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	return describeRefusal(d.gate.Judge(ctx, pair, nil))
}

// commitFirst records the mounted first generation's version on the bus,
// judging it again there.
func (d *Daemon) commitFirst(ctx context.Context, pair *signature.Pair) error {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	_, err := d.gate.Commit(ctx, pair, nil)
	return describeRefusal(err)
}

// signers names a signed generation's signers for a log line or a report:
// key ids, each with its group when it has one.
func signers(s *catalogue.Signed) string {
	names := make([]string, len(s.Signers))
	for i, k := range s.Signers {
		names[i] = k.KeyID
		if k.Group != "" {
			names[i] += " (" + k.Group + ")"
		}
	}
	return strings.Join(names, ", ")
}

// signingReport is the startup report's line on signatures.
func signingReport(cfg Config, gen *catalogue.Generation) string {
	if !cfg.Signing() || gen.Signed == nil {
		return "off: the catalogue's signatures are not checked (--catalogue-keys)"
	}
	s := gen.Signed
	policy := fmt.Sprintf("at least %d distinct signer(s)", max(cfg.CatalogueMinSigners, 1))
	if len(cfg.CatalogueMinPerGroup) > 0 {
		policy += ", per group " + cfg.CatalogueMinPerGroup.String()
	}
	return fmt.Sprintf("on: keys %s, %s; serving catalogue %s version %d signed at %s by %s; an older version is refused (highest served kept in %s)",
		cfg.CatalogueKeys, policy, s.Catalogue, s.Version, s.SignedAt.UTC().Format(time.RFC3339), signers(s), versions.Bucket)
}

// readyDetail is what /readyz adds to "ready" about the serving catalogue.
func (d *Daemon) readyDetail() string {
	gen := d.serving.Load()
	if gen == nil {
		return ""
	}
	if s := gen.Signed; s != nil {
		return fmt.Sprintf("catalogue %s version %d (%s) signed by %s", s.Catalogue, s.Version, gen.Digest, signers(s))
	}
	return "catalogue " + gen.Digest + " (signatures not checked)"
}
