package grant_test

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/chain/grant"
)

// fresh is a spender for which every grant is new, so that one signed grant
// can be checked b.N times: the benchmarks measure verification, not a
// bucket.
type fresh struct{}

func (fresh) Spend(context.Context, string, string) error { return nil }

func (fresh) Spent(context.Context, string) (bool, error) { return false, nil }

func benchVerifier(b *testing.B) (*fixture, *grant.Verifier, string) {
	b.Helper()
	f := newFixture(b)
	v, err := grant.New(grant.Config{Issuer: issuer, JWKSURL: f.jwks.URL, Audience: audience, Spender: fresh{}, Now: f.clock.Now})
	if err != nil {
		b.Fatal(err)
	}
	g := f.sign(b, f.claims())
	if _, err := v.Check(b.Context(), g, f.who, f.pay, f.payment); err != nil {
		b.Fatal(err)
	}
	return f, v, g
}

// BenchmarkCheck is a successful step 5 for a tool binding three material
// fields, with an ES256 grant and the key set already fetched.
func BenchmarkCheck(b *testing.B) {
	f, v, g := benchVerifier(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Check(b.Context(), g, f.who, f.pay, f.payment); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckParallel(b *testing.B) {
	f, v, g := benchVerifier(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Check(context.Background(), g, f.who, f.pay, f.payment); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCheckRefusedUnsigned is the cost of turning away a grant that
// is not even signed: what an attacker can make garmd spend per call.
func BenchmarkCheckRefusedUnsigned(b *testing.B) {
	f, v, _ := benchVerifier(b)
	g := "eyJhbGciOiJub25lIn0.e30.AAAA"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Check(b.Context(), g, f.who, f.pay, f.payment); err == nil {
			b.Fatal("accepted")
		}
	}
}
