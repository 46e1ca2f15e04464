package diff

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
)

// withManifestLimits builds the base contract with a catalogue.yaml whose
// limits key holds limits.
func withManifestLimits(t *testing.T, limits string) *artifact.Artifact {
	t.Helper()
	base, err := os.ReadFile(baseContract)
	if err != nil {
		t.Fatal(err)
	}
	dir := buildtest.Tree(t, map[string]string{
		"proto/shop/v1/orders.proto": string(base),
		"catalogue.yaml":             "schema: v1\ninclude: [proto]\nlimits:\n" + limits,
	})
	m, err := manifest.Load(filepath.Join(dir, "catalogue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := build.Run(context.Background(), build.Input{Manifest: m, Producer: buildtest.Producer})
	if err != nil {
		t.Fatal(err)
	}
	return res.Artifact
}

func TestADeploymentThatLoosensOrDropsItsOwnLimitWidens(t *testing.T) {
	t.Parallel()
	old := withManifestLimits(t, `  - {id: per_subject, tool: update_order, description: Changes per person., key: [tenant, subject], rate: {count: 10, window: minute}}
  - {id: per_tenant, all_tools: true, description: Changes per tenant., key: [tenant], rate: {count: 100, window: minute}}
`)
	new := withManifestLimits(t, `  - {id: per_subject, tool: update_order, description: Changes per person., key: [tenant, subject], rate: {count: 20, window: minute}}
`)
	changes := Compare(old, new)
	var got bytes.Buffer
	if err := Write(&got, changes); err != nil {
		t.Fatal(err)
	}
	want := "widening: shop.v1.update_order: limit per_subject loosened: count 20, was 10\n" +
		"widening: shop.v1.update_order: limit per_tenant removed (was 100 per minute per tenant)\n"
	if got.String() != want {
		t.Errorf("Compare printed\n%s\nwant\n%s", got.String(), want)
	}
	if !HasWidening(changes) {
		t.Error("--fail-on-widening would let a loosened limit through")
	}
	if back := Compare(new, old); HasWidening(back) {
		t.Errorf("restoring the limits widens: %v", back)
	}
}
