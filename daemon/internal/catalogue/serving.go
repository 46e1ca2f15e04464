package catalogue

import "sync/atomic"

// Serving is the generation being served. A reload stores a new one whole;
// a call loads it once and keeps what it got, so every call is answered by
// exactly one generation. The zero value serves nothing.
type Serving struct {
	current atomic.Pointer[Generation]
}

// Load is the generation being served, or nil when none is.
func (s *Serving) Load() *Generation { return s.current.Load() }

// Store makes g the generation being served.
func (s *Serving) Store(g *Generation) { s.current.Store(g) }
