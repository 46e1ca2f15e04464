package metrics_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/metrics"
)

// BenchmarkObserveCall is the hot-path cost of counting one call once its
// series exist: the chain's budget (design 9) includes it.
func BenchmarkObserveCall(b *testing.B) {
	m := metrics.New("bench", metrics.Sources{})
	tools := make([]string, 64)
	for i := range tools {
		tools[i] = "bench.v1.tool_" + strconv.Itoa(i)
		m.ObserveCall(tools[i], metrics.OutcomeOK, "", time.Millisecond)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.ObserveCall(tools[i&63], metrics.OutcomeOK, "", 250*time.Microsecond)
		i++
	}
}

// BenchmarkObserveCallParallel is the same under every core at once, where a
// lock on the cache would show.
func BenchmarkObserveCallParallel(b *testing.B) {
	m := metrics.New("bench", metrics.Sources{})
	tools := make([]string, 64)
	for i := range tools {
		tools[i] = "bench.v1.tool_" + strconv.Itoa(i)
		m.ObserveCall(tools[i], metrics.OutcomeDenied, "permission_denied", time.Millisecond)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			m.ObserveCall(tools[i&63], metrics.OutcomeDenied, "permission_denied", 250*time.Microsecond)
			i++
		}
	})
}

// BenchmarkObserveCallRefusedBeforeRouting is a call with no tool and a
// code, the shape an unauthenticated flood takes.
func BenchmarkObserveCallRefusedBeforeRouting(b *testing.B) {
	m := metrics.New("bench", metrics.Sources{})
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveCall("", metrics.OutcomeDenied, "unauthenticated", 20*time.Microsecond)
	}
}
