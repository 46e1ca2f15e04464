package input

import (
	"sync"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// shapeKey names one resolution: a plan (by pointer, so two generations
// never share an entry even when their plans are equal) and a caller shape.
type shapeKey struct {
	plan  *planv1.MessagePlan
	shape call.Shape
}

// shapeCache holds at most size values. Lookups take a read lock only; a full
// cache forgets one entry at random (Go's map order) to make room, which
// costs no bookkeeping on the hit path, and an evicted shape costs one
// resolution when it returns. A size of zero or less caches nothing.
type shapeCache[V any] struct {
	mu   sync.RWMutex
	size int
	m    map[shapeKey]V
}

func newShapeCache[V any](size int) *shapeCache[V] {
	size = max(size, 0)
	return &shapeCache[V]{size: size, m: make(map[shapeKey]V, min(size, 1024))}
}

func (c *shapeCache[V]) get(k shapeKey) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

// put stores v under k unless another caller stored a value first, and
// returns the value kept, so every caller of one shape shares one value.
func (c *shapeCache[V]) put(k shapeKey, v V) V {
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
