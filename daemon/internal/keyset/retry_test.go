package keyset

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

func TestAFailedRefetchForAnUnknownKidIsRetriedAfterItsOwnShortIntervalNotAMinute(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 1)

	// The issuer rotates while its endpoint is down: the refetch the new
	// kid causes fails.
	rotated := keysettest.NewKey(t, "ES256", "k2")
	srv.Serve(http.StatusServiceUnavailable, []byte("down"))
	clock.Advance(UnknownKidInterval)
	mustRefuse(t, s, rotated.Sign(t, payload))
	wantHits(t, srv, 2)
	// Not asked again on every call while it is down.
	mustRefuse(t, s, rotated.Sign(t, payload))
	clock.Advance(RetryAfterFailure - time.Nanosecond)
	mustRefuse(t, s, rotated.Sign(t, payload))
	wantHits(t, srv, 2)

	// The endpoint recovers: the next call after RetryAfterFailure fetches,
	// far less than a minute after the failed fetch began.
	srv.Publish(t, k, rotated)
	clock.Advance(time.Nanosecond)
	mustVerify(t, s, rotated.Sign(t, payload))
	mustVerify(t, s, k.Sign(t, payload))
	wantHits(t, srv, 3)

	// After that success the once-a-minute rule holds again.
	stranger := keysettest.NewKey(t, "ES256", "k-unknown")
	clock.Advance(UnknownKidInterval - time.Second)
	err := mustRefuse(t, s, stranger.Sign(t, payload))
	if !errors.Is(err, errUnknownKid) {
		t.Fatalf("refused with %v, want an unknown kid", err)
	}
	wantHits(t, srv, 3)
}

func TestAFailedRefetchIsNotRetriedSoonerThanAMinuteAfterTheLastSuccess(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	mustVerify(t, s, k.Sign(t, payload))

	// A token flood of unknown kids within the minute costs no fetch, even
	// well past RetryAfterFailure: nothing has failed.
	stranger := keysettest.NewKey(t, "ES256", "k-unknown")
	clock.Advance(10 * RetryAfterFailure)
	for range 20 {
		mustRefuse(t, s, stranger.Sign(t, payload))
	}
	wantHits(t, srv, 1)
}

func TestStatsCountFetchesByResultAndSayHowOldTheServingSetIs(t *testing.T) {
	k := keysettest.NewKey(t, "ES256", "k1")
	srv := keysettest.NewServer(t, k)
	s, clock := newSet(t, srv)
	if st := s.Stats(); st.Fetched || st.FetchesOK != 0 || st.FetchesFailed != 0 {
		t.Fatalf("before any fetch the stats are %+v, want zero", st)
	}
	mustVerify(t, s, k.Sign(t, payload))
	clock.Advance(3 * time.Second)
	if st := s.Stats(); !st.Fetched || st.Age != 3*time.Second || st.FetchesOK != 1 || st.FetchesFailed != 0 {
		t.Fatalf("after one fetch and 3s the stats are %+v, want fetched, age 3s, 1 ok", st)
	}

	srv.Serve(http.StatusInternalServerError, nil)
	clock.Advance(TTL)
	mustRefuse(t, s, k.Sign(t, payload))
	if st := s.Stats(); st.FetchesOK != 1 || st.FetchesFailed != 1 || st.Age != TTL+3*time.Second {
		t.Fatalf("after a failed fetch the stats are %+v, want 1 ok, 1 failed, the old set's age", st)
	}
}
