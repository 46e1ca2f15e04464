package keyset

import (
	"context"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

// bound is the most any single step of a test may take before the test
// fails; it bounds the test, it measures nothing.
const bound = 30 * time.Second

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newSet(t *testing.T, srv *keysettest.Server) (*Set, *keysettest.Clock) {
	t.Helper()
	clock := keysettest.NewClock(epoch)
	return NewSet(srv.URL, Options{Now: clock.Now}), clock
}

func verify(t *testing.T, s *Set, token string) ([]byte, Header, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()
	return s.Verify(ctx, []byte(token))
}

func mustVerify(t *testing.T, s *Set, token string) []byte {
	t.Helper()
	payload, _, err := verify(t, s, token)
	if err != nil {
		t.Fatalf("Verify refused a good token: %v", err)
	}
	return payload
}

func mustRefuse(t *testing.T, s *Set, token string) error {
	t.Helper()
	payload, _, err := verify(t, s, token)
	if err == nil {
		t.Fatalf("Verify accepted a token it must refuse (payload %q)", payload)
	}
	return err
}

// settle waits for the fetch in flight, if any, to finish.
func settle(t *testing.T, s *Set) {
	t.Helper()
	s.mu.Lock()
	f := s.inflight
	s.mu.Unlock()
	if f == nil {
		return
	}
	select {
	case <-f.done:
	case <-time.After(bound):
		t.Fatal("a key set fetch did not finish")
	}
}

func wantHits(t *testing.T, srv *keysettest.Server, want int64) {
	t.Helper()
	if got := srv.Hits(); got != want {
		t.Fatalf("the JWKS endpoint was asked %d times, want %d", got, want)
	}
}
