package buildertest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/buildertest"
)

func TestALargeContractBuildsIntoEveryToolItNames(t *testing.T) {
	dir := t.TempDir()
	buildertest.WriteLarge(t, dir, 2, 3)
	built, err := builder.FromRoots(context.Background(), dir)
	if err != nil {
		t.Fatalf("the contract does not build: %v", err)
	}
	var got []string
	for _, tool := range built.Artifact.Tools() {
		got = append(got, tool.Name)
	}
	slices.Sort(got)
	var want []string
	for p := range 2 {
		for i := range 3 {
			want = append(want, fmt.Sprintf("load%d_tool%d", p, i))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("built tools %q, want %q", got, want)
	}
}
