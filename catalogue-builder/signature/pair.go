package signature

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
)

// EnvelopeSuffix names an artifact's envelope: the artifact's file path or
// S3 key with this suffix ("catalogue.binpb" → "catalogue.binpb.sig").
// docs/decisions/0133 records why the pair is two objects and how they are
// published and read.
const EnvelopeSuffix = ".sig"

// EnvelopeLocation is where an artifact's envelope lives.
func EnvelopeLocation(artifactLocation string) string { return artifactLocation + EnvelopeSuffix }

// Fetch reads one object whole. A missing object is an error that wraps
// fs.ErrNotExist.
type Fetch func(ctx context.Context) ([]byte, error)

// Pair is an artifact read with its envelope and verified.
type Pair struct {
	Artifact []byte
	// ArtifactDigest is artifact.Digest of Artifact.
	ArtifactDigest string
	// Envelope is the envelope's bytes as read.
	Envelope []byte
	Verified *Verified
}

// PairError is a refusal of a pair, with the two digests read, so that a
// reader can tell the same half-published pair seen twice from a new one
// (Transit).
type PairError struct {
	ArtifactDigest string
	// EnvelopeDigest is EnvelopeDigest of the envelope read, or "" when
	// there was none.
	EnvelopeDigest string
	Err            error
}

func (e *PairError) Error() string { return e.Err.Error() }
func (e *PairError) Unwrap() error { return e.Err }

// ReadPair reads an artifact and its envelope in the order that makes a
// publication in progress look like one: the envelope, then the artifact,
// and, when the envelope signs another digest, the envelope once more.
// The publisher writes the artifact first and the envelope last
// (docs/decisions/0133), so an envelope that names the artifact just read
// is usually already there on the second read. The artifact is bounded by
// artifact.MaxSize, the envelope by MaxEnvelopeBytes (the fetches should
// bound what they read by these too). A missing envelope is ErrUnsigned;
// every refusal is a *PairError wrapping the sentinel Verify returns.
// ReadPair does not read the artifact as a catalogue: that is the caller's
// next step, over Pair.Artifact.
func ReadPair(ctx context.Context, readEnvelope, readArtifact Fetch, keys *KeySet) (*Pair, error) {
	env, envErr := readEnvelope(ctx)
	if envErr != nil && !errors.Is(envErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the catalogue's envelope: %w", envErr)
	}
	art, err := readArtifact(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the catalogue: %w", err)
	}
	if len(art) > artifact.MaxSize {
		return nil, fmt.Errorf("the catalogue is larger than %d bytes", artifact.MaxSize)
	}
	digest := artifact.Digest(art)
	p, err := verifyPair(art, digest, env, envErr, keys)
	if err == nil || !errors.Is(err, ErrDigestMismatch) && !errors.Is(err, ErrUnsigned) {
		return p, err
	}
	again, againErr := readEnvelope(ctx)
	if againErr != nil && !errors.Is(againErr, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the catalogue's envelope: %w", againErr)
	}
	return verifyPair(art, digest, again, againErr, keys)
}

func verifyPair(art []byte, digest string, env []byte, envErr error, keys *KeySet) (*Pair, error) {
	refuse := func(envDigest string, err error) (*Pair, error) {
		return nil, &PairError{ArtifactDigest: digest, EnvelopeDigest: envDigest, Err: err}
	}
	if envErr != nil {
		return refuse("", fmt.Errorf("%w: no envelope: %w", ErrUnsigned, envErr))
	}
	envDigest := EnvelopeDigest(env)
	e, err := Parse(env)
	if err != nil {
		return refuse(envDigest, err)
	}
	v, err := Verify(e, digest, keys)
	if err != nil {
		return refuse(envDigest, err)
	}
	return &Pair{Artifact: art, ArtifactDigest: digest, Envelope: env, Verified: v}, nil
}

// Transit tells a pair caught mid-publication from one that stays broken.
// A reader polling a catalogue asks Settled after each refused pair: the
// first time a given (artifact, envelope) pair that does not match is
// seen, it is "not yet" (false): keep serving, log quietly, poll again;
// the same pair seen on the next poll is settled (true): a refusal to log
// as any other. A pair that matches, or any other refusal, resets it. The
// zero value is ready; it is not safe for concurrent use.
type Transit struct {
	last string
}

// Settled reports whether err, a ReadPair refusal, should be reported as a
// refusal now (true) or is a publication that may still be in progress
// (false). Refusals other than a digest mismatch or a missing envelope are
// always settled; a nil err resets the Transit and reports false.
func (t *Transit) Settled(err error) bool {
	var pe *PairError
	if err == nil || !errors.As(err, &pe) || !(errors.Is(err, ErrDigestMismatch) || errors.Is(err, ErrUnsigned)) {
		t.last = ""
		return err != nil
	}
	key := pe.ArtifactDigest + " " + pe.EnvelopeDigest
	if t.last == key {
		return true
	}
	t.last = key
	return false
}
