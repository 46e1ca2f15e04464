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

func TestEveryToolOfALargeContractWithRulesHasItsTwoInstanceRulesAndALimit(t *testing.T) {
	dir := t.TempDir()
	buildertest.WriteLargeWithRulesAndLimits(t, dir, 2, 3)
	built, err := builder.FromRoots(context.Background(), dir)
	if err != nil {
		t.Fatalf("the contract does not build: %v", err)
	}
	tools := built.Artifact.Tools()
	if len(tools) != 6 {
		t.Fatalf("built %d tools, want 6", len(tools))
	}
	for _, tool := range tools {
		var ids []string
		for _, r := range tool.Policy.GetInstance().GetRequire() {
			ids = append(ids, r.GetId())
		}
		if want := []string{"own_record", "small_delegated_pages"}; !slices.Equal(ids, want) {
			t.Errorf("tool %s has instance rules %q, want %q", tool.Name, ids, want)
		}
		if limits := tool.Policy.GetLimits(); len(limits) != 1 || limits[0].GetId() != "per_subject" {
			t.Errorf("tool %s has limits %v, want per_subject", tool.Name, limits)
		}
	}
}
