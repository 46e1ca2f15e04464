package pending

import "time"

// SetClock makes s read the time from now, for tests that move past an
// expiry without waiting for it.
func SetClock(s *Store, now func() time.Time) { s.now = now }

// AskKey is the reuse key of r.
func AskKey(r Request) string { return askKey(r) }

// Reads is how many records s has read.
func Reads(s *Store) uint64 { return s.reads.Load() }
