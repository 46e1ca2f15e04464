package authn

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

func TestACachedTokenIsServedWithoutVerifyingItAgain(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, f.claims())
	first := f.accept(t, token)

	// Past the key set's life, with its endpoint down: only a cache hit can
	// still accept the token.
	f.clock.Advance(specKeySetTTL + time.Minute)
	f.jwksA.Serve(http.StatusInternalServerError, nil)
	second := f.accept(t, token)
	if second != first {
		t.Fatal("a cache hit returned a different principal")
	}
	if n := f.jwksA.Hits(); n != 1 {
		t.Fatalf("the key set was fetched %d times, want 1", n)
	}
	if hits, misses := f.auth.CacheCounts(); hits != 1 || misses != 1 {
		t.Fatalf("cache counts %d hits %d misses, want 1 and 1", hits, misses)
	}
	// A token the cache has not seen needs the keys, which are gone.
	f.refuse(t, "Bearer "+f.sign(t, set(f.claims(), "jti", "t-2")))
}

func TestACachedPrincipalIsNeverServedPastItsExp(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now().Unix()
	token := f.sign(t, set(f.claims(), "exp", now+60))
	first := f.accept(t, token)

	f.clock.Advance(59 * time.Second)
	if f.accept(t, token) != first {
		t.Fatal("a live cached token was not served from the cache")
	}
	// At exp the entry is gone; the token is still within the skew, so it
	// is verified again, and not cached.
	f.clock.Advance(time.Second)
	if f.accept(t, token) == first {
		t.Fatal("a cached principal was served at its token's exp")
	}
	if n := f.auth.cache.len(); n != 0 {
		t.Fatalf("the cache holds %d entries after exp, want 0", n)
	}
	f.clock.Advance(specSkew)
	f.refuse(t, "Bearer "+token)
	if hits, misses := f.auth.CacheCounts(); hits != 1 || misses != 3 {
		t.Fatalf("cache counts %d hits %d misses, want 1 and 3", hits, misses)
	}
}

func TestAnotherTaxonomyMissesAndNumbersCompartmentsItself(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, set(f.claims(), "garm.compartments", []string{"finance", "hr"}))
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	defer cancel()

	older := newTaxonomy("finance", "hr", "legal")
	newer := newTaxonomy("audit", "finance")
	p1, err := f.auth.Authenticate(ctx, "Bearer "+token, older)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := f.auth.Authenticate(ctx, "Bearer "+token, newer)
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 {
		t.Fatal("two generations were served one cached principal")
	}
	if p1.Compartments != 0b011 || p2.Compartments != 0b10 {
		t.Fatalf("compartments %b and %b, want each generation's own numbering (11, 10)", p1.Compartments, p2.Compartments)
	}
	if hits, misses := f.auth.CacheCounts(); hits != 0 || misses != 2 {
		t.Fatalf("cache counts %d hits %d misses, want 0 and 2", hits, misses)
	}
	// The cache keeps one generation: the older one's entry is gone.
	if n := f.auth.cache.len(); n != 1 {
		t.Fatalf("the cache holds %d entries, want 1", n)
	}
}

// valueTaxonomy is a Taxonomy that is not a pointer.
type valueTaxonomy struct{ tax *taxonomy }

func (v valueTaxonomy) CompartmentSet(names []string) (call.Compartments, []string, []string) {
	return v.tax.CompartmentSet(names)
}

func (v valueTaxonomy) DeclaredAttribute(name string) *toolv1.Attribute {
	return v.tax.DeclaredAttribute(name)
}

func (v valueTaxonomy) PrincipalView(p *call.Principal) *celrule.View { return v.tax.PrincipalView(p) }

func TestATaxonomyThatIsNotAPointerIsServedWithoutTheCache(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, f.claims())
	tax := valueTaxonomy{tax: f.tax}
	for range 3 {
		if _, err := f.auth.Authenticate(t.Context(), "Bearer "+token, tax); err != nil {
			t.Fatal(err)
		}
	}
	if hits, misses := f.auth.CacheCounts(); hits+misses != 0 || f.auth.cache.len() != 0 {
		t.Fatalf("the cache was used: %d hits, %d misses, %d entries", hits, misses, f.auth.cache.len())
	}
}

func TestARefusedTokenIsNotCached(t *testing.T) {
	f := newFixture(t)
	token := f.sign(t, set(f.claims(), "aud", "elsewhere"))
	f.refuse(t, "Bearer "+token)
	f.refuse(t, "Bearer "+token)
	if n := f.auth.cache.len(); n != 0 {
		t.Fatalf("the cache holds %d entries, want 0", n)
	}
}

func TestTheCacheIsBoundedInEntries(t *testing.T) {
	f := newFixtureWithCache(t, 32)
	for i := range 300 {
		f.accept(t, f.sign(t, set(f.claims(), "jti", fmt.Sprint(i))))
		if n := f.auth.cache.len(); n > 32 {
			t.Fatalf("after %d tokens the cache holds %d entries, more than 32", i+1, n)
		}
	}
}

func TestAFullCachePrefersToEvictExpiredEntries(t *testing.T) {
	c := newCache(cacheShards) // one entry per shard
	now := epoch
	k1 := &cacheKey{sum: [32]byte{0}, tax: newTaxonomy()}
	k2 := &cacheKey{sum: [32]byte{cacheShards}, tax: k1.tax} // same shard
	c.put(k1, &call.Principal{Expiry: now.Add(time.Second)}, now)
	later := now.Add(2 * time.Second)
	fresh := &call.Principal{Expiry: later.Add(time.Hour)}
	c.put(k2, fresh, later)
	if c.get(k2, later) != fresh || c.len() != 1 {
		t.Fatalf("the full shard did not make room: %d entries", c.len())
	}
}

func TestConcurrentCallersShareTheCacheSafely(t *testing.T) {
	f := newFixtureWithCache(t, 64)
	tokens := make([]string, 8)
	for i := range tokens {
		tokens[i] = f.sign(t, set(f.claims(), "jti", fmt.Sprint(i)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				p, err := f.auth.Authenticate(t.Context(), "Bearer "+tokens[(g+i)%len(tokens)], f.tax)
				if err != nil || p.Subject != "alice" {
					errs <- fmt.Errorf("call %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if hits, _ := f.auth.CacheCounts(); hits == 0 {
		t.Fatal("no call was served from the cache")
	}
}

func newFixtureWithCache(t *testing.T, size int) *fixture {
	t.Helper()
	return newFixtureWith(t, keysettest.NewKey(t, "ES256", "a-1"), func(c *Config) { c.CacheSize = size })
}
