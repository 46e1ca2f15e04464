package catalogue_test

import (
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

func TestServingHoldsNothingUntilAGenerationIsStored(t *testing.T) {
	var s catalogue.Serving
	if s.Load() != nil {
		t.Fatal("a new Serving serves something")
	}
	g := cataloguetest.Load(t, taxonomyFixture)
	s.Store(g)
	if s.Load() != g {
		t.Fatal("the stored generation is not served")
	}
}

func TestEveryReaderSeesAWholeGenerationWhileReloadsRace(t *testing.T) {
	first := cataloguetest.Load(t, taxonomyFixture)
	second, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s catalogue.Serving
	s.Store(first)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 1000 {
			if i%2 == 0 {
				s.Store(second)
			} else {
				s.Store(first)
			}
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				g := s.Load()
				if g != first && g != second {
					t.Error("a reader saw a generation that was never stored")
					return
				}
				// A pinned generation answers consistently for its life.
				if tool := g.Tools[0]; g.Route(tool.Method) != tool {
					t.Error("a generation's route table disagrees with its tools")
					return
				}
			}
		})
	}
	wg.Wait()
}
