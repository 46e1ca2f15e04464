package build_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	"google.golang.org/protobuf/proto"
)

// buildChanged builds the shop fixture before and after one edit of its
// orders file.
func buildChanged(t *testing.T, old, new string) (before, after *artifact.Artifact) {
	t.Helper()
	dir := copyTree(t, "testdata/shop")
	tools, shared := filepath.Join(dir, "tools"), filepath.Join(dir, "shared")
	before = buildtest.Artifact(t, tools, shared)
	edit(t, filepath.Join(tools, "shop", "v1", "orders.proto"), old, new)
	after = buildtest.Artifact(t, tools, shared)
	if before.Digest == after.Digest {
		t.Fatal("the edit did not change the artifact")
	}
	return before, after
}

func TestACommentChangesOnlyTheFieldDocsAndTheSchemaDescription(t *testing.T) {
	before, after := buildChanged(t, "// Where to tell the customer about it.", "// The customer's email address.")
	if proto.Equal(before.Catalogue.GetFiles(), after.Catalogue.GetFiles()) == false {
		t.Error("a comment changed the descriptors")
	}
	if !equalMaps(before.Catalogue.GetDescriptorHashes(), after.Catalogue.GetDescriptorHashes()) {
		t.Error("a comment changed a descriptor hash")
	}
	if got := after.Catalogue.GetFieldDocs()["shop.v1.Order.email"]; got != "The customer's email address." {
		t.Errorf("field doc %q", got)
	}
	// The plans carry the comment only as the schema's description (design
	// 4.3); with descriptions set aside, they are the same.
	if !equalExcept(before, after, func(m proto.Message) {
		c := m.(*cataloguev1.Catalogue)
		c.FieldDocs = nil
		withoutDescriptions(t, c)
	}) {
		t.Error("a comment changed more than the docs")
	}
}

func TestAClearanceChangesThePlansButNoHash(t *testing.T) {
	before, after := buildChanged(t, "read: CLEARANCE_CONFIDENTIAL", "read: CLEARANCE_RESTRICTED")
	if !equalMaps(before.Catalogue.GetDescriptorHashes(), after.Catalogue.GetDescriptorHashes()) {
		t.Error("a policy change moved a descriptor hash")
	}
	if proto.Equal(planOf(before, "shop.v1", "shop.v1.Order"), planOf(after, "shop.v1", "shop.v1.Order")) {
		t.Error("a clearance change left the plan as it was")
	}
	if !proto.Equal(planOf(before, "shop.v1", "shop.v1.GetOrderRequest"), planOf(after, "shop.v1", "shop.v1.GetOrderRequest")) {
		t.Error("a clearance change in Order changed the plan of another message")
	}
}

func TestAFieldTypeChangesTheHash(t *testing.T) {
	before, after := buildChanged(t, "  // The order's id.\n  optional string order_id = 1;\n}\n\n// CancelOrderRequest",
		"  // The order's id.\n  optional int64 order_id = 1;\n}\n\n// CancelOrderRequest")
	was, is := before.Catalogue.GetDescriptorHashes()["shop.v1"], after.Catalogue.GetDescriptorHashes()["shop.v1"]
	if was == is {
		t.Fatalf("a field's type changed and the hash stayed %s", was)
	}
	for _, h := range []string{was, is} {
		if len(h) != 64 {
			t.Errorf("hash %q is not 64 hex characters", h)
		}
	}
}

func planOf(a *artifact.Artifact, pkg, message string) proto.Message {
	if p := a.Plan(pkg, message); p != nil {
		return p
	}
	panic("no plan for " + message)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// withoutDescriptions removes the description keyword from every schema
// fragment of a catalogue's plans.
func withoutDescriptions(t *testing.T, c *cataloguev1.Catalogue) {
	strip := func(schema string) string {
		var v map[string]any
		if err := json.Unmarshal([]byte(schema), &v); err != nil {
			t.Fatal(err)
		}
		delete(v, "description")
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for _, pp := range c.GetPlans() {
		for _, mp := range pp.GetMessages() {
			mp.Schema = strip(mp.GetSchema())
			for _, r := range mp.GetRules() {
				r.Schema = strip(r.GetSchema())
			}
		}
	}
}
