package catalogue_test

import (
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
)

func TestAReloadTakesThePlansOfUnchangedPackagesAndDecodesTheRest(t *testing.T) {
	data := reloadContract(t)
	serving := loadServing(t, data)
	if g := reload(t, data, serving); catalogue.ReusedPlans(g) != len(serving.Catalogue.GetPlans()) {
		t.Fatalf("an unchanged reload took %d of %d plans", catalogue.ReusedPlans(g), len(serving.Catalogue.GetPlans()))
	}
	// load2's request gains a field: its plan changes, the others do not.
	g := reload(t, reloadContract(t, edit{"load2/v1/load.proto", "  optional int32 limit = 2", "  // Since when.\n  optional string since = 3;\n  optional int32 limit = 2"}), serving)
	if catalogue.ReusedPlans(g) != len(serving.Catalogue.GetPlans())-1 {
		t.Fatalf("took %d of %d plans, one of which changed", catalogue.ReusedPlans(g), len(serving.Catalogue.GetPlans()))
	}
	if toolNamed(t, g, "load2_tool0").InputPlan == toolNamed(t, serving, "load2_tool0").InputPlan {
		t.Fatal("load2's changed plan was taken from serving")
	}
	if toolNamed(t, g, "load1_tool0").InputPlan != toolNamed(t, serving, "load1_tool0").InputPlan {
		t.Fatal("load1's unchanged plan was decoded again")
	}
}

func TestAServingPlanOverChangedDescriptorsIsCheckedAgain(t *testing.T) {
	serving := loadServing(t, reloadContract(t))
	// A forged artifact: load2's requests gain a field, its descriptor
	// hash is the true one, and its plans are serving's, byte for byte,
	// which no longer describe the request.
	changed := reloadContract(t, edit{"load2/v1/load.proto", "  optional int32 limit = 2", "  // Since when.\n  optional string since = 3;\n  optional int32 limit = 2"})
	forged := reencode(t, changed, func(c *cataloguev1.Catalogue) {
		for i, pp := range c.GetPlans() {
			if pp.GetPackage() == "load2.v1" {
				for _, old := range serving.Catalogue.GetPlans() {
					if old.GetPackage() == "load2.v1" {
						c.Plans[i] = old
					}
				}
			}
		}
	})
	if _, err := catalogue.Load(forged, catalogue.Options{}); err == nil {
		t.Fatal("the forgery loads; it proves nothing")
	}
	g, err := catalogue.Reload(forged, catalogue.Options{}, serving)
	if err == nil {
		t.Fatalf("a plan that does not describe its message reloaded (%d plans taken)", catalogue.ReusedPlans(g))
	}
	// The record was serving's, byte for byte: the same bytes over
	// serving's own descriptors take every plan.
	same := reencode(t, reloadContract(t), func(*cataloguev1.Catalogue) {})
	if g := reload(t, same, serving); catalogue.ReusedPlans(g) != len(serving.Catalogue.GetPlans()) {
		t.Fatalf("re-encoded plans are not serving's bytes: %d taken", catalogue.ReusedPlans(g))
	}
}

func TestAChangedPlanOverServingsDescriptorsIsChecked(t *testing.T) {
	data := reloadContract(t)
	serving := loadServing(t, data)
	// A forged artifact: serving's descriptors, byte for byte, and load1's
	// request plan less a rule, which no longer describes the request.
	forged := reencode(t, data, func(c *cataloguev1.Catalogue) {
		for _, pp := range c.GetPlans() {
			for _, mp := range pp.GetMessages() {
				if mp.GetMessage() == "load1.v1.Tool0Request" {
					mp.Rules = mp.Rules[:len(mp.Rules)-1]
				}
			}
		}
	})
	if _, err := catalogue.Load(forged, catalogue.Options{}); err == nil {
		t.Fatal("the forgery loads; it proves nothing")
	}
	if g, err := catalogue.Reload(forged, catalogue.Options{}, serving); err == nil {
		t.Fatalf("a plan that does not describe its message reloaded (%d files taken)", catalogue.ReusedFiles(g))
	}
}
