package cache

import "sync"

// Map holds at most size values. Lookups take a read lock only. A size of
// zero or less caches nothing.
type Map[K comparable, V any] struct {
	mu   sync.RWMutex
	size int
	m    map[K]V
}

// New is a Map of at most size entries.
func New[K comparable, V any](size int) *Map[K, V] {
	size = max(size, 0)
	return &Map[K, V]{size: size, m: make(map[K]V, min(size, 1024))}
}

// Get returns the value stored under k.
func (c *Map[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

// Put stores v under k unless another caller stored a value first, and
// returns the value kept, so every caller of one key shares one value.
func (c *Map[K, V]) Put(k K, v V) V {
	if c.size == 0 {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[k]; ok {
		return kept
	}
	if len(c.m) >= c.size {
		for evict := range c.m {
			delete(c.m, evict)
			break
		}
	}
	c.m[k] = v
	return v
}

// Len is the number of entries held.
func (c *Map[K, V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
