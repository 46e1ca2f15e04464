package catalogue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func calculatorWith(t *testing.T, plans ...*planv1.LimitPlan) *catalogue.Generation {
	t.Helper()
	gen, err := catalogue.Load(cataloguetest.Calculator(t), catalogue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gen.Catalogue.Limits = plans
	return gen
}

func deployed(tool string, l *toolv1.Limit) *planv1.LimitPlan {
	return &planv1.LimitPlan{Tool: tool, Limit: l, Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT}
}

var oneInFlight = &toolv1.Limit{Id: "one", Description: "One at a time.", Key: []toolv1.Limit_KeyPart{toolv1.Limit_KEY_PART_TOOL},
	Kind: &toolv1.Limit_Concurrency_{Concurrency: &toolv1.Limit_Concurrency{InFlight: 1}}}

// A catalogue that declares limits mounts only where they are counted, and
// a concurrency bound only where no call outlives its lease; a limit
// garmd cannot enforce as written refuses the mount, naming it.
func TestACatalogueWithLimitsMountsOnlyWhereTheyAreCounted(t *testing.T) {
	t.Parallel()
	plan := deployed("calc.v1.add", oneInFlight)
	if err := catalogue.Mount(calculatorWith(t, plan), catalogue.Steps{}); err == nil || !strings.Contains(err.Error(), "declares limits") {
		t.Fatalf("mounted without --limits: %v", err)
	}
	if err := catalogue.Mount(calculatorWith(t, plan), catalogue.Steps{Limits: true, ToolTimeout: time.Hour}); err == nil || !strings.Contains(err.Error(), "lease") {
		t.Fatalf("mounted a concurrency bound with a deadline past its lease: %v", err)
	}
	bad := &toolv1.Limit{Id: "zero", Description: "Nothing.", Key: []toolv1.Limit_KeyPart{toolv1.Limit_KEY_PART_TOOL},
		Kind: &toolv1.Limit_Concurrency_{Concurrency: &toolv1.Limit_Concurrency{InFlight: 0}}}
	if err := catalogue.Mount(calculatorWith(t, deployed("calc.v1.add", bad)), catalogue.Steps{Limits: true}); err == nil || !strings.Contains(err.Error(), `limit "zero" of tool calc.v1.add`) {
		t.Fatalf("mounted a bound of 0: %v", err)
	}
	gen := calculatorWith(t, plan)
	if err := catalogue.Mount(gen, catalogue.Steps{Limits: true, ToolTimeout: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if got := gen.Limits().Of(gen.Route("/calc.v1.Calculator/Add")); len(got) != 1 || got[0].ID != "one" {
		t.Fatalf("add's limits: %v", got)
	}
	if gen.Limits().Of(gen.Route("/calc.v1.Calculator/Divide")) != nil {
		t.Fatal("divide has a limit it does not declare")
	}
	// Without limits, nothing is asked of the step.
	if err := catalogue.Mount(calculatorWith(t), catalogue.Steps{}); err != nil {
		t.Fatal(err)
	}
}
