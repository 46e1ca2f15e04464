package garmd

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/metrics"
)

func TestReloadsAreCountedByResultAndARefusalOncePerArtifact(t *testing.T) {
	t.Parallel()
	var ops metrics.Operations
	m := metrics.New("test", metrics.Sources{Operations: &ops})
	rig := newReloadRig(t)
	rig.r.ops = &ops

	rig.store.put(mustBytes(t, ungrantCatalogue), "bad")
	for range 3 {
		rig.poll()
	}
	rig.store.setDown(true)
	rig.poll()
	rig.poll()
	rig.store.setDown(false)
	rig.store.put(mustBytes(t, biggerCatalogue), "good")
	rig.poll()

	for result, want := range map[string]float64{"swapped": 1, "refused": 1, "unreachable": 2} {
		if got := reloadCount(t, m, result); got != want {
			t.Errorf("%s{result=%q} = %v, want %v", metrics.CatalogueReloadsName, result, got, want)
		}
	}
}

func reloadCount(t *testing.T, m *metrics.Metrics, result string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	series := metrics.CatalogueReloadsName + `{result="` + result + `"} `
	for line := range strings.Lines(rec.Body.String()) {
		if rest, ok := strings.CutPrefix(line, series); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s in:\n%s", series, rec.Body.String())
	return 0
}
