package listing_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestOneShapeIsAssembledOnceAndThenServedFromCache(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	l := listing.New(listing.Options{})
	first, err := l.List(g, everyone.principal(t, g), agent)
	if err != nil {
		t.Fatal(err)
	}
	listed := uint64(len(decode(t, first).Tools))
	if got := l.Stats().Assembled; got != listed {
		t.Fatalf("the first listing assembled %d schemas for %d tools", got, listed)
	}
	again, err := l.List(g, everyone.principal(t, g), agent)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) || l.Stats().Assembled != listed {
		t.Fatalf("the second listing assembled %d more", l.Stats().Assembled-listed)
	}
	// Another caller of the same shape — fewer verbs, a scope, another
	// audience — reuses the same schemas.
	narrower := everyone
	narrower.verbs, narrower.scope = []toolv1.Verb{read}, []string{"support"}
	if _, err := l.List(g, narrower.principal(t, g), person); err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(g, everyone.principal(t, g), runner); err != nil {
		t.Fatal(err)
	}
	if got := l.Stats().Assembled; got != listed+1 { // run_job, listed for runners only
		t.Fatalf("the same shape assembled %d schemas, want %d", got, listed+1)
	}
	// Another shape assembles its own.
	lower := everyone
	lower.clearance = internal
	if _, err := l.List(g, lower.principal(t, g), agent); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Assembled <= listed+1 || s.Shapes != 2 || s.Generations != 1 {
		t.Fatalf("stats %+v after a second shape", s)
	}
}

func TestTheCachesAreBounded(t *testing.T) {
	desk := cataloguetest.Load(t, deskFixture)
	calc, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := listing.New(listing.Options{Shapes: 2, Generations: 1})
	for _, g := range []*catalogue.Generation{desk, calc, desk} {
		for _, c := range []toolv1.Clearance{public, internal, confidential, restricted} {
			who := everyone
			who.clearance = c
			body, err := l.List(g, who.principal(t, g), agent)
			if err != nil {
				t.Fatal(err)
			}
			if d := decode(t, body).Digest; d != g.Digest {
				t.Fatalf("listed %s from the generation %s", d, g.Digest)
			}
			if s := l.Stats(); s.Shapes > 2 || s.Generations > 1 {
				t.Fatalf("stats %+v past the bounds", s)
			}
		}
	}
}

func TestConcurrentListingsAgree(t *testing.T) {
	g := cataloguetest.Load(t, deskFixture)
	l := listing.New(listing.Options{Shapes: 2})
	callers := []caller{everyone, {clearance: internal, verbs: everyone.verbs}, {clearance: public, verbs: everyone.verbs}}
	want := make([][]byte, len(callers))
	for i, c := range callers {
		body, err := listing.New(listing.Options{}).List(g, c.principal(t, g), agent)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = body
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := (w + i) % len(callers)
				body, err := l.List(g, callers[k].principal(t, g), agent)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(body, want[k]) {
					t.Errorf("caller %d was listed something else", k)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestReloadsDoNotAccumulateGenerations(t *testing.T) {
	data := cataloguetest.Calculator(t)
	l := listing.New(listing.Options{})
	for range 6 {
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.List(g, everyone.principal(t, g), agent); err != nil {
			t.Fatal(err)
		}
		if s := l.Stats(); s.Generations > listing.DefaultGenerations || s.Shapes != 1 {
			t.Fatalf("stats %+v after a reload", s)
		}
	}
}
