package metrics_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/garm-dev/garm/daemon/internal/metrics"
)

const catalogueHeader = `# HELP garm_catalogue_info Always 1; digest and producer name the catalogue generation serving calls.
# TYPE garm_catalogue_info gauge
`

func TestNoCatalogueSeriesExistsBeforeAGenerationServes(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	if n := count(t, m, metrics.CatalogueInfoName); n != 0 {
		t.Fatalf("%d catalogue series before any generation, want 0", n)
	}
}

func TestANewGenerationReplacesTheCatalogueSeries(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.SetCatalogue("sha256:aaaa", "garm-catalogue v0.1.0")
	assertSeries(t, m, catalogueHeader+`garm_catalogue_info{digest="sha256:aaaa",producer="garm-catalogue v0.1.0"} 1`+"\n", metrics.CatalogueInfoName)

	m.SetCatalogue("sha256:bbbb", "garm-catalogue v0.2.0")
	assertSeries(t, m, catalogueHeader+`garm_catalogue_info{digest="sha256:bbbb",producer="garm-catalogue v0.2.0"} 1`+"\n", metrics.CatalogueInfoName)
}

func TestAProducerThatIsNotUTF8IsExposedRepaired(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.SetCatalogue("sha256:aaaa", "build\xffer")
	assertSeries(t, m, catalogueHeader+`garm_catalogue_info{digest="sha256:aaaa",producer="build`+"\uFFFD"+`er"} 1`+"\n", metrics.CatalogueInfoName)
}

// A scrape racing a reload sees exactly one generation: neither none (a
// reset not yet refilled) nor two (old and new side by side).
func TestAScrapeRacingAReloadSeesExactlyOneGeneration(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.SetCatalogue("sha256:0", "p")
	const reloads, scrapes = 500, 200

	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range reloads {
			m.SetCatalogue("sha256:"+strconv.Itoa(i+1), "p")
		}
	})
	counts := make(chan int, scrapes)
	wg.Go(func() {
		for range scrapes {
			n, err := testutil.GatherAndCount(m.Gatherer(), metrics.CatalogueInfoName)
			if err != nil {
				t.Error(err)
			}
			counts <- n
		}
	})
	wg.Wait()
	close(counts)
	for n := range counts {
		if n != 1 {
			t.Fatalf("a scrape saw %d catalogue series, want 1", n)
		}
	}
	assertSeries(t, m, catalogueHeader+`garm_catalogue_info{digest="sha256:`+strconv.Itoa(reloads)+`",producer="p"} 1`+"\n", metrics.CatalogueInfoName)
}
