package authn

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
)

// cacheShards spreads the cache's locks so concurrent callers rarely meet.
const cacheShards = 16

// evictionProbe is how many entries an insert into a full shard looks at
// for an expired one before it evicts the first it saw.
const evictionProbe = 8

// cacheKey is a token (by SHA-256) as one generation numbered it.
type cacheKey struct {
	sum [32]byte
	tax Taxonomy
}

// cache holds verified principals, bounded in entries, each until its
// token's exp and no longer. Eviction is random: Go's map iteration starts
// at a random place, so the first entries a probe visits are a cheap,
// race-free random sample.
type cache struct {
	shards   [cacheShards]cacheShard
	perShard int
	hits     atomic.Uint64
	misses   atomic.Uint64

	// generation is the Taxonomy of the last insert. Entries of any other
	// are purged when it changes, so a cache never keeps an old catalogue
	// generation alive.
	genMu      sync.Mutex
	generation Taxonomy
}

type cacheShard struct {
	mu      sync.RWMutex
	entries map[cacheKey]*call.Principal
}

func newCache(size int) *cache {
	per := max(1, (size+cacheShards-1)/cacheShards)
	c := &cache{perShard: per}
	for i := range c.shards {
		c.shards[i].entries = make(map[cacheKey]*call.Principal)
	}
	return c
}

func (c *cache) shard(k *cacheKey) *cacheShard { return &c.shards[k.sum[0]%cacheShards] }

// get is the principal cached under k, unless its token has expired at now.
func (c *cache) get(k *cacheKey, now time.Time) *call.Principal {
	s := c.shard(k)
	s.mu.RLock()
	p := s.entries[*k]
	s.mu.RUnlock()
	if p != nil && now.Before(p.Expiry) {
		c.hits.Add(1)
		return p
	}
	c.misses.Add(1)
	if p != nil {
		s.mu.Lock()
		if s.entries[*k] == p {
			delete(s.entries, *k)
		}
		s.mu.Unlock()
	}
	return nil
}

// put caches p under k, if its token has not expired at now.
func (c *cache) put(k *cacheKey, p *call.Principal, now time.Time) {
	if !now.Before(p.Expiry) {
		return
	}
	c.adopt(k.tax)
	s := c.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[*k]; !ok && len(s.entries) >= c.perShard {
		s.evictOne(now)
	}
	s.entries[*k] = p
}

// evictOne removes an expired entry among the first few visited, else the
// first visited. The shard's lock is held.
func (s *cacheShard) evictOne(now time.Time) {
	var first cacheKey
	seen := 0
	for k, p := range s.entries {
		if !now.Before(p.Expiry) {
			delete(s.entries, k)
			return
		}
		if seen == 0 {
			first = k
		}
		if seen++; seen == evictionProbe {
			break
		}
	}
	if seen > 0 {
		delete(s.entries, first)
	}
}

// adopt makes tax the cache's generation, purging every entry of another.
func (c *cache) adopt(tax Taxonomy) {
	c.genMu.Lock()
	defer c.genMu.Unlock()
	if c.generation == tax {
		return
	}
	c.generation = tax
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for k := range s.entries {
			if k.tax != tax {
				delete(s.entries, k)
			}
		}
		s.mu.Unlock()
	}
}

// len is the number of entries, for tests.
func (c *cache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.entries)
		s.mu.RUnlock()
	}
	return n
}
