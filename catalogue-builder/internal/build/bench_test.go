package build_test

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/buildertest"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
)

// BenchmarkBuildTenThousandTools builds a 10,000-tool catalogue from
// sources: compile, lint, plans, hashes, docs, bytes and the read-back
// check. It reports the artifact's size.
func BenchmarkBuildTenThousandTools(b *testing.B) {
	dir := b.TempDir()
	buildertest.WriteLarge(b, dir, 100, 100)
	m := &manifest.Manifest{Path: "catalogue.yaml", Schema: "v1", Include: []manifest.Include{{Dir: dir, Abs: dir}}}
	var size int
	for b.Loop() {
		res, err := build.Run(context.Background(), build.Input{Manifest: m, Producer: buildtest.Producer})
		if err != nil {
			b.Fatal(err)
		}
		if got := len(res.Artifact.Tools()); got != 10_000 {
			b.Fatalf("%d tools", got)
		}
		size = len(res.Bytes)
	}
	b.ReportMetric(float64(size)/(1<<20), "artifact-MiB")
}
