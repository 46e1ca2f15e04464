package metrics_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/metrics"
)

func TestReadinessQuorumAndDroppedSpansAreReadAtScrapeTime(t *testing.T) {
	ready, lost, dropped := true, 0, uint64(0)
	m := metrics.New("test", metrics.Sources{
		Ready:        func() bool { return ready },
		QuorumLost:   func() int { return lost },
		SpansDropped: func() uint64 { return dropped },
	})
	want := func(name string, v float64) {
		t.Helper()
		if got := value(t, m, name, nil); got != v {
			t.Errorf("%s = %v, want %v", name, got, v)
		}
	}
	want(metrics.ReadyName, 1)
	want(metrics.QuorumLostName, 0)
	want(metrics.SpansDroppedName, 0)
	ready, lost, dropped = false, 2, 7
	want(metrics.ReadyName, 0)
	want(metrics.QuorumLostName, 2)
	want(metrics.SpansDroppedName, 7)
}

func TestWithoutSourcesGarmdIsNotReadyAndHasLostAndDroppedNothing(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	for name, want := range map[string]float64{metrics.ReadyName: 0, metrics.QuorumLostName: 0, metrics.SpansDroppedName: 0} {
		if got := value(t, m, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}
