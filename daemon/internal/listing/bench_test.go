package listing_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// BenchmarkListToolsThousandVisibleWarm lists 1,000 tools (10 packages of
// 100), every one visible, with the cache already warm for the caller's
// shape. design 9's budget is 1 ms. It reports the body's size.
func BenchmarkListToolsThousandVisibleWarm(b *testing.B) {
	dir := b.TempDir()
	cataloguetest.WriteLarge(b, dir, 10, 100)
	g, err := catalogue.Load(cataloguetest.Build(b, dir), catalogue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	p := caller{clearance: internal, verbs: []toolv1.Verb{read}, compartments: []string{"pii-contact"}}.principal(b, g)
	l := listing.New(listing.Options{})
	warm, err := l.List(g, p, agent)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(decode(b, warm).Tools); n != 1000 {
		b.Fatalf("%d tools visible, want 1000", n)
	}
	perShape := heldByAShape(b, l, g)
	assembled := l.Stats().Assembled
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.List(g, p, agent); err != nil {
			b.Fatal(err)
		}
	}
	if l.Stats().Assembled != assembled {
		b.Fatal("a warm listing assembled a schema")
	}
	b.ReportMetric(float64(len(warm))/1024, "body-KiB")
	b.ReportMetric(float64(perShape)/1024, "shape-KiB")
}

// heldByAShape is the live heap a second caller shape's cached schemas
// keep: every tool listed once for it.
func heldByAShape(b *testing.B, l *listing.Lister, g *catalogue.Generation) uint64 {
	b.Helper()
	other := caller{clearance: confidential, verbs: []toolv1.Verb{read}, compartments: []string{"pii-contact"}}.principal(b, g)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := l.List(g, other, agent); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkListToolsThousandVisibleFirstOfAShape lists the same 1,000
// visible tools for a caller shape seen for the first time: the rows are
// made (they are the same for every caller), and every input schema is
// assembled for the shape. Two shapes alternate through a Lister that
// keeps one, so every listing is a shape's first.
func BenchmarkListToolsThousandVisibleFirstOfAShape(b *testing.B) {
	dir := b.TempDir()
	cataloguetest.WriteLarge(b, dir, 10, 100)
	g, err := catalogue.Load(cataloguetest.Build(b, dir), catalogue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	shapes := []*call.Principal{
		caller{clearance: internal, verbs: []toolv1.Verb{read}, compartments: []string{"pii-contact"}}.principal(b, g),
		caller{clearance: confidential, verbs: []toolv1.Verb{read}}.principal(b, g),
	}
	l := listing.New(listing.Options{Shapes: 1})
	for _, p := range shapes {
		body, err := l.List(g, p, agent)
		if err != nil {
			b.Fatal(err)
		}
		if n := len(decode(b, body).Tools); n != 1000 {
			b.Fatalf("%d tools visible, want 1000", n)
		}
	}
	b.ReportAllocs()
	i := 0
	start, measured := processCPU()
	for b.Loop() {
		before := l.Stats().Assembled
		if _, err := l.List(g, shapes[i%2], agent); err != nil {
			b.Fatal(err)
		}
		if got := l.Stats().Assembled - before; got != 1000 {
			b.Fatalf("a shape's first listing assembled %d schemas, want 1000", got)
		}
		i++
	}
	// CPU time per listing, every thread's: on a shared machine it varies
	// far less than elapsed time does.
	if end, ok := processCPU(); measured && ok && b.N > 0 {
		b.ReportMetric(float64(end-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}
