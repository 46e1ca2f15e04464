package catalogue_test

import (
	"runtime"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

// BenchmarkLoadTenThousandTools loads a 10,000-tool catalogue (100 packages
// of 100 tools) from its bytes: artifact checks, descriptors, model, plans
// and every call.Tool. SPEC 9's budget is 100 ms and 100 MiB of heap. It
// reports the heap a loaded generation holds (live bytes after a GC, with
// the generation kept alive, minus live bytes before it was loaded) and the
// artifact's size.
func BenchmarkLoadTenThousandTools(b *testing.B) {
	dir := b.TempDir()
	cataloguetest.WriteLarge(b, dir, 100, 100)
	data := cataloguetest.Build(b, dir)

	held := heldBy(b, data)
	var g *catalogue.Generation
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if g, err = catalogue.Load(data, catalogue.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	if len(g.Tools) != 10_000 {
		b.Fatalf("%d tools", len(g.Tools))
	}
	b.ReportMetric(float64(held)/(1<<20), "held-MiB")
	b.ReportMetric(float64(len(data))/(1<<20), "artifact-MiB")
}

// heldBy is the live heap one loaded generation of data keeps.
func heldBy(b *testing.B, data []byte) uint64 {
	b.Helper()
	return liveHeapAdded(func() any {
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return g
	})
}

// liveHeapAdded is the live heap (after a GC) that grow adds and keeps
// through what it returns.
func liveHeapAdded(grow func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := grow()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkMountTenThousandTools mounts the same 10,000-tool catalogue: the
// allowlist and the generation's protovalidate validator, compiled eagerly
// over every input (each has rules). Loading is outside the loop; a fresh
// generation is loaded for each mount, since a mount keeps its validator.
// It reports the heap the validator adds to a loaded generation.
func BenchmarkMountTenThousandTools(b *testing.B) {
	dir := b.TempDir()
	cataloguetest.WriteLarge(b, dir, 100, 100)
	data := cataloguetest.Build(b, dir)
	held := mountHolds(b, data)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(held)/(1<<20), "validator-MiB")
}

// mountHolds is the live heap Mount adds to a loaded generation of data.
func mountHolds(b *testing.B, data []byte) uint64 {
	b.Helper()
	g, err := catalogue.Load(data, catalogue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return liveHeapAdded(func() any {
		if err := catalogue.Mount(g, catalogue.Steps{}); err != nil {
			b.Fatal(err)
		}
		return g
	})
}
