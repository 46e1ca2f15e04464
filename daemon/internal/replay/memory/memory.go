package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/garm-dev/garm/daemon/internal/replay"
)

// Spender spends keys in a map.
type Spender struct {
	mu sync.Mutex
	// spent holds every key spent, with the call that spent it; order
	// lists them as they were spent.
	spent map[string]string
	order []string
	// fail, when set, is what every Spend returns, spending nothing.
	fail error
}

// New is a Spender that has spent nothing.
func New() *Spender { return &Spender{spent: map[string]string{}} }

// Spend records key as spent by callID, or returns replay.ErrSpent when
// another call recorded it before (nil when callID did: idempotent, like
// every Spender), or the error given to Fail, recording nothing.
func (s *Spender) Spend(_ context.Context, key, callID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if owner, ok := s.spent[key]; ok {
		if owner == callID {
			return nil
		}
		return replay.ErrSpent
	}
	s.spent[key] = callID
	s.order = append(s.order, key)
	return nil
}

// Spent reports whether key was spent; the error given to Fail when one
// was.
func (s *Spender) Spent(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return false, s.fail
	}
	_, ok := s.spent[key]
	return ok, nil
}

// Fail makes every later Spend return err without spending anything, as a
// bucket that cannot be written would; Fail(nil) makes Spend work again.
func (s *Spender) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// Spends are the keys spent so far, in the order they were spent.
func (s *Spender) Spends() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// Has reports whether key was spent.
func (s *Spender) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.spent[key]
	return ok
}

var _ replay.Spender = (*Spender)(nil)
