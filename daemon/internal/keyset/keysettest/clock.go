package keysettest

import (
	"sync"
	"time"
)

// Clock is a clock a test moves by hand, so nothing waits on real time.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock is a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now is the clock's reading; pass it as a Now option.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
