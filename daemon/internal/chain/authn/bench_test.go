package authn

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
)

// benchClaims is a realistic token: a person and the agent acting for it.
func benchClaims(f *fixture) map[string]any {
	c := set(f.claims(), "garm.compartments", []string{"finance", "hr"})
	c = set(c, "garm.verbs", []string{"READ", "WRITE"})
	return set(c, "act", actor("agent-1", "INTERNAL", []string{"finance"}, []string{"READ"}))
}

func BenchmarkAuthenticateCached(b *testing.B) {
	f := benchFixture(b, 0)
	header := "Bearer " + f.keyA.Sign(b, encode(b, benchClaims(f)))
	if _, err := f.auth.Authenticate(b.Context(), header, f.tax); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.auth.Authenticate(b.Context(), header, f.tax); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if hits, _ := f.auth.CacheCounts(); hits == 0 {
		b.Fatal("the benchmark never hit the cache")
	}
}

func BenchmarkAuthenticateUncached(b *testing.B) {
	f := benchFixture(b, -1)
	header := "Bearer " + f.keyA.Sign(b, encode(b, benchClaims(f)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.auth.Authenticate(b.Context(), header, f.tax); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateCachedParallel is the cached path under contention.
func BenchmarkAuthenticateCachedParallel(b *testing.B) {
	f := benchFixture(b, 0)
	header := "Bearer " + f.keyA.Sign(b, encode(b, benchClaims(f)))
	if _, err := f.auth.Authenticate(b.Context(), header, f.tax); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.auth.Authenticate(b.Context(), header, f.tax); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchFixture(b *testing.B, cacheSize int) *fixture {
	b.Helper()
	key := keysettest.NewKey(b, "ES256", "a-1")
	jwks := keysettest.NewServer(b, key)
	f := &fixture{clock: keysettest.NewClock(epoch), keyA: key, jwksA: jwks, tax: newTaxonomy("finance", "hr", "legal")}
	auth, err := New(Config{
		Issuers:   []Issuer{{Name: issuerA, JWKSURL: jwks.URL}},
		Audience:  audience,
		CacheSize: cacheSize,
		Now:       f.clock.Now,
	})
	if err != nil {
		b.Fatal(err)
	}
	f.auth = auth
	return f
}
