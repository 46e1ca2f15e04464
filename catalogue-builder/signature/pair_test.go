package signature_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// store is two objects written in turn by a publisher and read by a
// reader, as an S3 bucket or a directory holds them; a missing object
// reads as fs.ErrNotExist.
type store struct {
	mu      sync.Mutex
	objects map[string][]byte
	// afterRead, when set, runs after each read of name: a publisher
	// acting between a reader's two reads.
	afterRead func(name string)
}

func (s *store) put(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data == nil {
		delete(s.objects, name)
		return
	}
	s.objects[name] = data
}

func (s *store) fetch(name string) signature.Fetch {
	return func(context.Context) ([]byte, error) {
		s.mu.Lock()
		data, ok := s.objects[name]
		hook := s.afterRead
		s.mu.Unlock()
		if hook != nil {
			hook(name)
		}
		if !ok {
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		}
		return data, nil
	}
}

const artifactKey = "catalogues/payments.binpb"

func (s *store) read(keys *signature.KeySet) (*signature.Pair, error) {
	return signature.ReadPair(context.Background(), s.fetch(signature.EnvelopeLocation(artifactKey)), s.fetch(artifactKey), keys)
}

// signedFor is an envelope over artifact as version, by s.
func signedFor(t *testing.T, s *signature.Signer, artifact []byte, version uint64) []byte {
	t.Helper()
	e, err := signature.Sign(signature.Statement{Catalogue: "payments", Digest: digestOf(artifact), Version: version, SignedAt: time.Now()}, s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAReaderBetweenThePublishersTwoWritesSeesThePairWhole(t *testing.T) {
	t.Parallel()
	owner := newSigner(t, signature.AlgEdDSA)
	keys := keySet(t, nil, owner)
	v1, v2 := []byte("version one"), []byte("version two")
	s := &store{objects: map[string][]byte{artifactKey: v1, signature.EnvelopeLocation(artifactKey): signedFor(t, owner, v1, 1)}}
	// The publisher writes the artifact right after the reader read the
	// old envelope, and the new envelope right after it read the artifact.
	var once sync.Once
	s.afterRead = func(name string) {
		if name != artifactKey {
			once.Do(func() { s.put(artifactKey, v2) })
			return
		}
		s.put(signature.EnvelopeLocation(artifactKey), signedFor(t, owner, v2, 2))
	}
	p, err := s.read(keys)
	if err != nil {
		t.Fatalf("a pair published while it was read: %v", err)
	}
	if string(p.Artifact) != string(v2) || p.Verified.Statement.Version != 2 {
		t.Fatalf("read %q version %d, want version two", p.Artifact, p.Verified.Statement.Version)
	}
}

func TestAHalfPublishedPairIsNotYetAndThenARefusal(t *testing.T) {
	t.Parallel()
	owner := newSigner(t, signature.AlgEdDSA)
	keys := keySet(t, nil, owner)
	v1, v2 := []byte("version one"), []byte("version two")
	for _, tc := range []struct {
		name     string
		artifact []byte
		envelope []byte
		want     error
	}{
		{"the artifact without its envelope", v2, signedFor(t, owner, v1, 1), signature.ErrDigestMismatch},
		{"the envelope without its artifact", v1, signedFor(t, owner, v2, 2), signature.ErrDigestMismatch},
		{"a first artifact with no envelope yet", v1, nil, signature.ErrUnsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &store{objects: map[string][]byte{artifactKey: tc.artifact}}
			s.put(signature.EnvelopeLocation(artifactKey), tc.envelope)
			var transit signature.Transit
			_, err := s.read(keys)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if transit.Settled(err) {
				t.Fatal("a pair seen half-published once is already a refusal")
			}
			_, err = s.read(keys)
			if !transit.Settled(err) {
				t.Fatal("a pair seen half-published on two polls is still not yet")
			}
		})
	}
}

func TestOnlyAMismatchOrAMissingEnvelopeCanBeNotYet(t *testing.T) {
	t.Parallel()
	owner, stranger := newSigner(t, signature.AlgEdDSA), newSigner(t, signature.AlgEdDSA)
	keys := keySet(t, nil, owner)
	v1 := []byte("version one")
	s := &store{objects: map[string][]byte{artifactKey: v1, signature.EnvelopeLocation(artifactKey): signedFor(t, stranger, v1, 1)}}
	var transit signature.Transit
	_, err := s.read(keys)
	if !errors.Is(err, signature.ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
	if !transit.Settled(err) {
		t.Fatal("a stranger's signature was taken for a publication in progress")
	}
	s.put(signature.EnvelopeLocation(artifactKey), signedFor(t, owner, v1, 1))
	if _, err := s.read(keys); err != nil || transit.Settled(err) {
		t.Fatalf("a whole pair: %v", err)
	}
}
