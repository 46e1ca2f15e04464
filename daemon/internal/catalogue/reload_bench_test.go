package catalogue_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

// changedCatalogue is largeCatalogue(b, tools) with one package's file
// changed (load7.v1's ids may be at most 32 characters, not 64): the
// reload an operator makes when one team changes its contract. Built once
// and kept beside largeCatalogue's.
func changedCatalogue(b *testing.B, tools int) []byte {
	b.Helper()
	name := fmt.Sprintf("large-%d-%d-load7-changed.binpb", tools/toolsPerPackage, toolsPerPackage)
	return keptCatalogue(b, name, func(dir string) {
		cataloguetest.WriteLarge(b, dir, tools/toolsPerPackage, toolsPerPackage)
		path := filepath.Join(dir, "load7/v1/load.proto")
		src, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(src), "max_len: 64", "max_len: 32")), 0o644); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkReload reloads a 10,000-tool catalogue over the generation
// serving it, as garmd's reloader does, then mounts it: once with the same
// bytes under a new name (a store that rewrote the object; garmd's
// reloader skips equal digests before loading, so this is the floor of
// reuse) and once with one package of a hundred changed. Only what the
// digests prove unchanged is reused (catalogue.Reload); the rest is built
// and every check runs. It reports the files taken from the serving
// generation.
func BenchmarkReload(b *testing.B) {
	const tools = 10_000
	serving := largeCatalogue(b, tools)
	cases := []struct {
		name string
		data []byte
	}{
		{"unchanged", serving},
		{"one-package-changed", changedCatalogue(b, tools)},
	}
	g, err := catalogue.Load(serving, catalogue.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := catalogue.Mount(g, mountSteps); err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		for _, mount := range []bool{false, true} {
			name := c.name
			if mount {
				name += "/and-mount"
			}
			b.Run(name, func(b *testing.B) {
				var next *catalogue.Generation
				b.ReportAllocs()
				cpu := startCPU()
				for b.Loop() {
					var err error
					if next, err = catalogue.Reload(c.data, catalogue.Options{}, g); err != nil {
						b.Fatal(err)
					}
					if mount {
						if err := catalogue.Mount(next, mountSteps); err != nil {
							b.Fatal(err)
						}
					}
				}
				cpu.report(b)
				b.ReportMetric(float64(catalogue.ReusedFiles(next)), "reused-files")
			})
		}
	}
}
