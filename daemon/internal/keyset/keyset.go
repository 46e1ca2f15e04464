package keyset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The life of a key set (design 7.5).
const (
	// TTL is how long a fetched key set is trusted.
	TTL = 10 * time.Minute
	// RefreshAhead is the last part of a set's life in which a use starts
	// one background refresh, so a busy set is replaced before it is stale.
	RefreshAhead = 2 * time.Minute
	// UnknownKidInterval is the least time between a fetch that succeeded
	// and the next one caused by a key id the set does not hold.
	UnknownKidInterval = time.Minute
	// RetryAfterFailure is the least time between a failed fetch and the
	// next one, whatever caused either: an endpoint that is down is not
	// asked again on every call, and one that comes back is asked again
	// soon, not a whole UnknownKidInterval later.
	RetryAfterFailure = 5 * time.Second
	// FetchTimeout bounds one fetch, from request to parsed body.
	FetchTimeout = 10 * time.Second
	// MaxBodyBytes is the largest JWKS document accepted.
	MaxBodyBytes = 1 << 20
)

// Options are what a Set needs besides its URL. Every field has a default.
type Options struct {
	// Client fetches the JWKS; default http.DefaultClient. The fetch is
	// bounded by FetchTimeout whatever the client's own timeout.
	Client *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives fetch failures and skipped keys; default discards.
	Logger *slog.Logger
}

// Set is the keys published at one JWKS URL. It is safe for concurrent use.
type Set struct {
	url    string
	client *http.Client
	now    func() time.Time
	log    *slog.Logger

	// snap is the last set fetched successfully; nil before the first.
	snap atomic.Pointer[snapshot]
	// fetchedOK and fetchFailed count finished fetches, for Stats.
	fetchedOK, fetchFailed atomic.Uint64

	mu sync.Mutex
	// inflight is the fetch under way, nil when none is.
	inflight *fetch
	// lastStart is when the last fetch began, lastFailure when the last
	// failed fetch ended, lastErr why it failed.
	lastStart   time.Time
	lastFailure time.Time
	lastErr     error
}

// snapshot is one fetched key set, immutable once stored.
type snapshot struct {
	keys    map[string]*verifyKey
	expires time.Time
	// refreshAt is when a use starts a background refresh.
	refreshAt time.Time
}

// fetch is one request to the JWKS URL; done closes when snap or err is set.
type fetch struct {
	done chan struct{}
	snap *snapshot
	err  error
}

// NewSet is the key set published at url. Nothing is fetched until the
// first verification needs a key.
func NewSet(url string, opts Options) *Set {
	s := &Set{url: url, client: opts.Client, now: opts.Now, log: opts.Logger}
	if s.client == nil {
		s.client = http.DefaultClient
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// errUnknownKid is returned, wrapped with the kid, when the set does not
// hold the key a signature names.
var errUnknownKid = errors.New("the key set holds no key with this kid")

// key is the verification key named kid: from the current set when it is
// fresh and holds it; otherwise after the one fetch the rules allow.
func (s *Set) key(ctx context.Context, kid string) (*verifyKey, error) {
	now := s.now()
	snap := s.snap.Load()
	if snap != nil && now.Before(snap.expires) {
		if !now.Before(snap.refreshAt) {
			s.refreshInBackground(now)
		}
		if k, ok := snap.keys[kid]; ok {
			return k, nil
		}
		f := s.fetchForUnknownKid(now)
		if f == nil {
			return nil, fmt.Errorf("%w %q (the set was fetched, or failed to be, too recently to fetch it again)", errUnknownKid, clip(kid))
		}
		fresh, err := s.wait(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("%w %q (refetch failed: %v)", errUnknownKid, clip(kid), err)
		}
		return lookup(fresh, kid)
	}

	f, err := s.fetchBecauseStale(now)
	if err != nil {
		return nil, err
	}
	fresh, err := s.wait(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("the key set at %s is unavailable: %w", s.url, err)
	}
	return lookup(fresh, kid)
}

func lookup(snap *snapshot, kid string) (*verifyKey, error) {
	if k, ok := snap.keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("%w %q", errUnknownKid, clip(kid))
}

// fetchBecauseStale is the fetch a caller without a fresh set waits on: the
// one in flight, or a new one unless the last failed too recently.
func (s *Set) fetchBecauseStale(now time.Time) (*fetch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight != nil {
		return s.inflight, nil
	}
	if s.lastErr != nil && now.Sub(s.lastFailure) < RetryAfterFailure {
		return nil, fmt.Errorf("the key set at %s is unavailable (last fetch failed: %w)", s.url, s.lastErr)
	}
	return s.startLocked(now), nil
}

// fetchForUnknownKid is the fetch an unknown kid may wait on: the one in
// flight, or a new one when the last fetch succeeded at least
// UnknownKidInterval ago, or failed at least RetryAfterFailure ago; nil
// when neither.
func (s *Set) fetchForUnknownKid(now time.Time) *fetch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight != nil {
		return s.inflight
	}
	if s.lastErr != nil {
		if now.Sub(s.lastFailure) < RetryAfterFailure {
			return nil
		}
	} else if now.Sub(s.lastStart) < UnknownKidInterval {
		return nil
	}
	return s.startLocked(now)
}

// refreshInBackground starts one fetch that nobody waits on, unless one is
// in flight or the last failed too recently.
func (s *Set) refreshInBackground(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight != nil || (s.lastErr != nil && now.Sub(s.lastFailure) < RetryAfterFailure) {
		return
	}
	s.startLocked(now)
}

// startLocked starts a fetch; s.mu is held. The fetch runs on its own
// context, bounded by FetchTimeout, so that one caller giving up does not
// fail the others waiting on it.
func (s *Set) startLocked(now time.Time) *fetch {
	f := &fetch{done: make(chan struct{})}
	s.inflight, s.lastStart = f, now
	go s.run(f, now)
	return f
}

func (s *Set) run(f *fetch, start time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
	defer cancel()
	snap, err := s.download(ctx, start)

	s.mu.Lock()
	if err != nil {
		s.lastFailure, s.lastErr = s.now(), err
		s.fetchFailed.Add(1)
		s.log.Warn("keyset: fetching a key set failed", "url", s.url, "error", err)
	} else {
		s.lastErr = nil
		s.snap.Store(snap)
		s.fetchedOK.Add(1)
		s.log.Debug("keyset: fetched a key set", "url", s.url, "keys", len(snap.keys))
	}
	s.inflight = nil
	f.snap, f.err = snap, err
	s.mu.Unlock()
	close(f.done)
}

// Stats are what a Set reports to metrics.
type Stats struct {
	// Age is how long ago the set serving was fetched (from when its fetch
	// began); Fetched is false, and Age zero, before the first success.
	Age     time.Duration
	Fetched bool
	// FetchesOK and FetchesFailed count the fetches that have finished.
	FetchesOK, FetchesFailed uint64
}

// Stats reads the set's counters and its age on its own clock. It takes no
// lock: a scrape never waits on a fetch.
func (s *Set) Stats() Stats {
	st := Stats{FetchesOK: s.fetchedOK.Load(), FetchesFailed: s.fetchFailed.Load()}
	if snap := s.snap.Load(); snap != nil {
		st.Fetched = true
		st.Age = max(s.now().Sub(snap.expires.Add(-TTL)), 0)
	}
	return st
}

// wait is f's outcome, or ctx's error if the caller stops waiting first.
func (s *Set) wait(ctx context.Context, f *fetch) (*snapshot, error) {
	select {
	case <-f.done:
		return f.snap, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// clip bounds a caller-supplied string before it is put in an error.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
