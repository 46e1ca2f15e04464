package catalogue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"google.golang.org/protobuf/types/dynamicpb"
)

// loadCases are the catalogues the load benchmarks run on: design 9's
// 10,000 tools, five times as many, so a run shows whether the load grows
// in proportion to what is served (compare their µs/tool, B/tool and
// allocs/tool), and 10,000 tools each with two instance rules and a limit
// (cataloguetest.WriteLargeWithRulesAndLimits), so a run shows what the
// new steps add.
var loadCases = []loadCase{
	{name: "tools=10000", tools: 10_000},
	{name: "tools=50000", tools: 50_000},
	{name: "tools=10000/instance-rules=2/limits=1", tools: 10_000, rules: true},
}

// loadCase is one catalogue the load benchmarks run on.
type loadCase struct {
	name  string
	tools int
	// rules gives every tool two instance rules and a limit.
	rules bool
}

// data is the case's catalogue, built once (largeCatalogue).
func (c loadCase) data(b *testing.B) []byte {
	b.Helper()
	if c.rules {
		return largeCatalogueWithRules(b, c.tools)
	}
	return largeCatalogue(b, c.tools)
}

// toolsPerPackage is how the generated catalogues are cut into packages.
const toolsPerPackage = 100

// built caches each generated catalogue's bytes for the life of the test
// binary: building one is far slower than loading it, and -count repeats
// a benchmark in one process.
var built struct {
	sync.Mutex
	bytes map[string][]byte
}

// keptCatalogues names the environment variable that names a directory
// where the generated catalogues are kept between runs, so that runs of
// two test binaries taken in turn (before and after a change) load the
// same bytes without each building them. Unset, each binary builds its
// own.
const keptCatalogues = "GARM_BENCH_CATALOGUES"

// largeCatalogue is the bytes of a generated catalogue of tools tools
// (cataloguetest.WriteLarge, toolsPerPackage to a package), built once.
func largeCatalogue(b *testing.B, tools int) []byte {
	b.Helper()
	name := fmt.Sprintf("large-%d-%d.binpb", tools/toolsPerPackage, toolsPerPackage)
	return keptCatalogue(b, name, func(dir string) {
		cataloguetest.WriteLarge(b, dir, tools/toolsPerPackage, toolsPerPackage)
	})
}

// largeCatalogueWithRules is largeCatalogue with two instance rules and a
// limit on every tool (cataloguetest.WriteLargeWithRulesAndLimits), built once.
func largeCatalogueWithRules(b *testing.B, tools int) []byte {
	b.Helper()
	name := fmt.Sprintf("large-%d-%d-rules-and-limit.binpb", tools/toolsPerPackage, toolsPerPackage)
	return keptCatalogue(b, name, func(dir string) {
		cataloguetest.WriteLargeWithRulesAndLimits(b, dir, tools/toolsPerPackage, toolsPerPackage)
	})
}

// keptCatalogue is the bytes of the catalogue write's sources build to,
// built once per test binary, and kept between runs under name in the
// directory keptCatalogues names, when it names one.
func keptCatalogue(b *testing.B, name string, write func(dir string)) []byte {
	b.Helper()
	built.Lock()
	defer built.Unlock()
	if data, ok := built.bytes[name]; ok {
		return data
	}
	var kept string
	if dir := os.Getenv(keptCatalogues); dir != "" {
		kept = filepath.Join(dir, name)
	}
	data, err := os.ReadFile(kept)
	if kept == "" || err != nil {
		dir := b.TempDir()
		write(dir)
		data = cataloguetest.Build(b, dir)
		if kept != "" {
			if err := os.WriteFile(kept, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	if built.bytes == nil {
		built.bytes = map[string][]byte{}
	}
	built.bytes[name] = data
	return data
}

// BenchmarkLoad loads a generated catalogue from its bytes at each of
// loadSizes: artifact checks, descriptors, model, plans and every
// call.Tool. design 9's budget for 10,000 tools is 100 ms and 100 MiB of
// heap. It reports the heap a loaded generation holds (live bytes after a
// GC, with the generation kept alive, minus live bytes before it was
// loaded), the artifact's size and the time per tool.
func BenchmarkLoad(b *testing.B) {
	for _, c := range loadCases {
		for _, start := range loadStarts {
			b.Run(c.name+start.name, func(b *testing.B) {
				data := c.data(b)
				o := start.options(b, data)
				held := heldBy(b, data, o, false)
				var g *catalogue.Generation
				b.ReportAllocs()
				cpu, mem := startCPU(), startMem()
				for b.Loop() {
					var err error
					if g, err = catalogue.Load(data, o); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
				mem.report(b, c.tools)
				if len(g.Tools) != c.tools || (o.Checked != nil) != (g.FromChecked() > 0) {
					b.Fatalf("%d tools, want %d; %d files from the check cache", len(g.Tools), c.tools, g.FromChecked())
				}
				reportPerTool(b, c.tools)
				b.ReportMetric(float64(held)/(1<<20), "held-MiB")
				b.ReportMetric(float64(len(data))/(1<<20), "artifact-MiB")
			})
		}
	}
}

// BenchmarkLoadAndMount is what garmd does before it serves a catalogue,
// at start or on a reload: load, then mount (the allowlist and the
// protovalidate validator, compiled eagerly over every input). It reports
// the heap a mounted generation holds.
func BenchmarkLoadAndMount(b *testing.B) {
	for _, c := range loadCases {
		for _, start := range loadStarts {
			b.Run(c.name+start.name, func(b *testing.B) {
				data := c.data(b)
				o := start.options(b, data)
				held := heldBy(b, data, o, true)
				b.ReportAllocs()
				cpu, mem := startCPU(), startMem()
				for b.Loop() {
					g, err := catalogue.Load(data, o)
					if err != nil {
						b.Fatal(err)
					}
					if err := catalogue.Mount(g, mountSteps); err != nil {
						b.Fatal(err)
					}
				}
				cpu.report(b)
				mem.report(b, c.tools)
				reportPerTool(b, c.tools)
				b.ReportMetric(float64(held)/(1<<20), "held-MiB")
			})
		}
	}
}

// loadStarts are the two ways garmd comes to load a catalogue at start:
// first, checking every descriptor file and compiling every input's
// validation rules, and again, the same executable building the files its
// check cache recorded (--check-cache) from their bytes and compiling the
// inputs it vouches for on first use (artifact.Checked,
// catalogue.Options.Validated).
var loadStarts = []struct {
	name    string
	options func(b *testing.B, data []byte) catalogue.Options
}{
	{"", func(*testing.B, []byte) catalogue.Options { return catalogue.Options{} }},
	{"/from-check-cache", func(b *testing.B, data []byte) catalogue.Options {
		b.Helper()
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := catalogue.Mount(g, mountSteps); err != nil {
			b.Fatal(err)
		}
		return catalogue.Options{Checked: artifact.NewChecked(g.FileKeys()), Validated: artifact.NewChecked(g.ValidatedKeys())}
	}},
}

// mountSteps are the steps the benchmarks mount under: garmd's with the
// limit step on, which a catalogue declaring limits needs.
var mountSteps = catalogue.Steps{Limits: true, ToolTimeout: 30 * time.Second}

// cpuClock measures the CPU time a benchmark's loop uses.
type cpuClock struct {
	start time.Duration
	ok    bool
}

func startCPU() cpuClock {
	start, ok := processCPU()
	return cpuClock{start, ok}
}

// report reports the process's CPU time per iteration since c started, in
// milliseconds: every core's work, the collector's included. Where elapsed
// time says how long a load keeps garmd waiting on an idle machine, this
// says what it costs on a busy one.
func (c cpuClock) report(b *testing.B) {
	b.Helper()
	if !c.ok || b.N == 0 {
		return
	}
	b.ReportMetric(float64(c.elapsed())/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// memClock counts the bytes and objects a benchmark's loop allocates.
type memClock struct{ bytes, objects uint64 }

func startMem() memClock {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return memClock{m.TotalAlloc, m.Mallocs}
}

// report reports the bytes and allocations per tool per iteration since
// c started: B/op and allocs/op divided by the catalogue's tools, whose
// ratio between sizes says whether the garbage is linear in the
// catalogue.
func (c memClock) report(b *testing.B, tools int) {
	b.Helper()
	if b.N == 0 {
		return
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	per := float64(b.N) * float64(tools)
	b.ReportMetric(float64(m.TotalAlloc-c.bytes)/per, "B/tool")
	b.ReportMetric(float64(m.Mallocs-c.objects)/per, "allocs/tool")
}

// elapsed is the process's CPU time since c started; 0 where it cannot
// be read.
func (c cpuClock) elapsed() time.Duration {
	end, ok := processCPU()
	if !c.ok || !ok {
		return 0
	}
	return end - c.start
}

// reportPerTool reports the time per tool, whose ratio between sizes says
// whether the work is linear in the catalogue.
func reportPerTool(b *testing.B, tools int) {
	b.Helper()
	if n := b.N; n > 0 {
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n)/float64(tools), "µs/tool")
	}
}

// heldBy is the live heap one generation of data keeps, loaded with o and,
// when mounted, mounted.
func heldBy(b *testing.B, data []byte, o catalogue.Options, mounted bool) uint64 {
	b.Helper()
	return liveHeapAdded(func() any {
		g, err := catalogue.Load(data, o)
		if err != nil {
			b.Fatal(err)
		}
		if mounted {
			if err := catalogue.Mount(g, mountSteps); err != nil {
				b.Fatal(err)
			}
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

// BenchmarkMountTenThousandTools mounts a 10,000-tool catalogue: the
// allowlist and the generation's protovalidate validator, compiled eagerly
// over every input (each has rules). Loading is outside the loop; a fresh
// generation is loaded for each mount, since a mount keeps its validator.
// It reports the heap the validator adds to a loaded generation.
func BenchmarkMountTenThousandTools(b *testing.B) {
	benchmarkMount(b, largeCatalogue(b, 10_000))
}

// BenchmarkMountTenThousandToolsWithRulesAndLimits is
// BenchmarkMountTenThousandTools with two instance rules and a limit on
// every tool, each compiled at mount (instance.Compile, limit.Compile):
// 20,000 CEL programs and 10,000 limits.
func BenchmarkMountTenThousandToolsWithRulesAndLimits(b *testing.B) {
	benchmarkMount(b, largeCatalogueWithRules(b, 10_000))
}

// benchmarkMount mounts the catalogue data, loading a fresh generation
// outside the timer for each mount.
func benchmarkMount(b *testing.B, data []byte) {
	held := mountHolds(b, data)
	var mountCPU time.Duration
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		g, err := catalogue.Load(data, catalogue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu := startCPU()
		if err := catalogue.Mount(g, mountSteps); err != nil {
			b.Fatal(err)
		}
		mountCPU += cpu.elapsed()
	}
	if b.N > 0 {
		b.ReportMetric(float64(mountCPU)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
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
		if err := catalogue.Mount(g, mountSteps); err != nil {
			b.Fatal(err)
		}
		return g
	})
}

// BenchmarkFirstValidation validates, once, an empty message of every input
// of a 10,000-tool catalogue just mounted: what a tool's first call pays in
// its input step. From the check cache, each input's rules compile then
// (the work a first start's mount does for every input at once); after a
// first start they were compiled at mount. It reports the time per input.
func BenchmarkFirstValidation(b *testing.B) {
	data := largeCatalogue(b, 10_000)
	for _, start := range loadStarts {
		b.Run("tools=10000"+start.name, func(b *testing.B) {
			o := start.options(b, data)
			var inputs int
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				g, err := catalogue.Load(data, o)
				if err != nil {
					b.Fatal(err)
				}
				if err := catalogue.Mount(g, mountSteps); err != nil {
					b.Fatal(err)
				}
				msgs := make([]*dynamicpb.Message, len(g.Tools))
				for i, t := range g.Tools {
					msgs[i] = dynamicpb.NewMessage(t.Input)
				}
				inputs = len(msgs)
				b.StartTimer()
				for _, m := range msgs {
					_ = g.Validator().Validate(m)
				}
			}
			if n := b.N; n > 0 && inputs > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(inputs)/1e3, "µs/input")
			}
		})
	}
}
