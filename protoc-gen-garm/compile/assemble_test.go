package compile_test

import (
	"fmt"
	"strings"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

const (
	leaf       = planv1.Container_CONTAINER_LEAF
	message    = planv1.Container_CONTAINER_MESSAGE
	listOf     = planv1.Container_CONTAINER_LIST_OF_MESSAGES
	mapOf      = planv1.Container_CONTAINER_MAP_OF_MESSAGES
	str        = `{"type":"string"}`
	closedFrag = `{"additionalProperties":false,"type":"object"}`
)

func rule(path string, container planv1.Container, schema string, required bool) *planv1.FieldRule {
	return &planv1.FieldRule{Path: path, Container: container, Schema: schema, Required: required}
}

// nestedPlan has a child under each kind of container.
func nestedPlan() *planv1.MessagePlan {
	return &planv1.MessagePlan{
		Message: "a.v1.Req",
		Schema:  `{"additionalProperties":false,"description":"Req.","type":"object"}`,
		Rules: []*planv1.FieldRule{
			rule("name", leaf, str, true),
			rule("billing", message, closedFrag, false),
			rule("billing.iban", leaf, str, true),
			rule("billing.bic", leaf, str, false),
			rule("lines", listOf, `{"items":{"additionalProperties":false,"type":"object"},"maxItems":3,"type":"array"}`, false),
			rule("lines.sku", leaf, str, true),
			rule("labels", mapOf, `{"additionalProperties":{"additionalProperties":false,"type":"object"},"type":"object"}`, false),
			rule("labels.text", leaf, str, false),
			rule("aardvark", leaf, str, true),
		},
	}
}

func TestAssembleSchemaPlacesEachChildWhereItsParentsContainerSays(t *testing.T) {
	got, err := compile.AssembleSchema(nestedPlan(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"description":"Req.","properties":{` +
		`"aardvark":{"type":"string"},` +
		`"billing":{"additionalProperties":false,"properties":{"bic":{"type":"string"},"iban":{"type":"string"}},"required":["iban"],"type":"object"},` +
		`"labels":{"additionalProperties":{"additionalProperties":false,"properties":{"text":{"type":"string"}},"type":"object"},"type":"object"},` +
		`"lines":{"items":{"additionalProperties":false,"properties":{"sku":{"type":"string"}},"required":["sku"],"type":"object"},"maxItems":3,"type":"array"},` +
		`"name":{"type":"string"}},"required":["aardvark","name"],"type":"object"}`
	if string(got) != want {
		t.Errorf("AssembleSchema\n got: %s\nwant: %s", got, want)
	}
}

func TestARuleNotShownTakesItsSubtreeAndItsRequiredEntryWithIt(t *testing.T) {
	hidden := map[string]bool{"billing": true, "name": true, "lines.sku": true}
	got, err := compile.AssembleSchema(nestedPlan(), func(r *planv1.FieldRule) bool { return !hidden[r.GetPath()] })
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"description":"Req.","properties":{` +
		`"aardvark":{"type":"string"},` +
		`"labels":{"additionalProperties":{"additionalProperties":false,"properties":{"text":{"type":"string"}},"type":"object"},"type":"object"},` +
		`"lines":{"items":{"additionalProperties":false,"type":"object"},"maxItems":3,"type":"array"}},"required":["aardvark"],"type":"object"}`
	if string(got) != want {
		t.Errorf("AssembleSchema\n got: %s\nwant: %s", got, want)
	}
	for _, name := range []string{"billing", "iban", "bic", "name", "sku"} {
		if strings.Contains(string(got), `"`+name+`"`) {
			t.Errorf("the schema names %q, which the caller is not shown", name)
		}
	}
}

func TestOneofConstraintsForgetMembersTheCallerIsNotShown(t *testing.T) {
	shell := `{"additionalProperties":false,"allOf":[` +
		`{"not":{"required":["x","y"]}},{"not":{"required":["x","z"]}},{"not":{"required":["y","z"]}},` +
		`{"not":{"required":["p","q"]}},{"anyOf":[{"required":["p"]},{"required":["q"]}]}` +
		`],"type":"object"}`
	plan := &planv1.MessagePlan{Message: "a.v1.Pick", Schema: shell}
	for _, name := range []string{"x", "y", "z", "p", "q"} {
		plan.Rules = append(plan.Rules, rule(name, leaf, str, false))
	}
	tests := []struct {
		hidden string
		want   string
	}{
		{"", `"allOf":[{"not":{"required":["x","y"]}},{"not":{"required":["x","z"]}},{"not":{"required":["y","z"]}},{"not":{"required":["p","q"]}},{"anyOf":[{"required":["p"]},{"required":["q"]}]}]`},
		{"y", `"allOf":[{"not":{"required":["x","z"]}},{"not":{"required":["p","q"]}},{"anyOf":[{"required":["p"]},{"required":["q"]}]}]`},
		{"x y", `"allOf":[{"not":{"required":["p","q"]}},{"anyOf":[{"required":["p"]},{"required":["q"]}]}]`},
		{"q", `"allOf":[{"not":{"required":["x","y"]}},{"not":{"required":["x","z"]}},{"not":{"required":["y","z"]}},{"anyOf":[{"required":["p"]}]}]`},
		// A required oneof with no member shown admits nothing, without
		// naming the members.
		{"x y p q", `"allOf":[false]`},
	}
	for _, tt := range tests {
		hidden := strings.Fields(tt.hidden)
		got, err := compile.AssembleSchema(plan, func(r *planv1.FieldRule) bool {
			for _, h := range hidden {
				if r.GetPath() == h {
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), tt.want) {
			t.Errorf("hiding %q:\n got: %s\nwant it to contain %s", tt.hidden, got, tt.want)
		}
		for _, h := range hidden {
			if strings.Contains(string(got), `"`+h+`"`) {
				t.Errorf("hiding %q: the schema still names %q: %s", tt.hidden, h, got)
			}
		}
	}
	// Nothing but oneof constraints: with every member of every oneof hidden
	// except one, no constraint remains and allOf goes.
	got, err := compile.AssembleSchema(&planv1.MessagePlan{Message: "a.v1.Pick", Schema: `{"additionalProperties":false,"allOf":[{"not":{"required":["x","y"]}}],"type":"object"}`,
		Rules: []*planv1.FieldRule{rule("x", leaf, str, false), rule("y", leaf, str, false)}}, func(r *planv1.FieldRule) bool { return r.GetPath() == "x" })
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{"x":{"type":"string"}},"type":"object"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestAnOpaqueRootIsItsShellWithTheDialect(t *testing.T) {
	// An opaque root has no rules; its own oneofs are its type's, not a
	// caller's projection, and stay.
	shell := `{"additionalProperties":false,"allOf":[{"not":{"required":["a","b"]}}],"properties":{"a":{"type":"string"},"b":{"type":"string"}},"type":"object"}`
	got, err := compile.AssembleSchema(&planv1.MessagePlan{Message: "garm.card.v1.Card", Schema: shell}, func(*planv1.FieldRule) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"$schema":"https://json-schema.org/draft/2020-12/schema",` + shell[1:]; string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestAssembleSchemaRefusesAMalformedPlan(t *testing.T) {
	tests := []struct {
		name  string
		rules []*planv1.FieldRule
		says  string
	}{
		{"a child before its parent", []*planv1.FieldRule{rule("a.b", leaf, str, false), rule("a", message, closedFrag, false)}, `rule "a.b" comes before its parent`},
		{"a child of a leaf", []*planv1.FieldRule{rule("a", leaf, str, false), rule("a.b", leaf, str, false)}, `rule "a.b" comes before its parent or its parent has no children`},
		{"a fragment that is not JSON", []*planv1.FieldRule{rule("a", leaf, `{"type":`, false)}, `rule "a"`},
		{"a fragment that is not an object", []*planv1.FieldRule{rule("a", leaf, `true`, false)}, "not a JSON object"},
		{"a list without items", []*planv1.FieldRule{rule("a", listOf, `{"type":"array"}`, false)}, `has no "items" object`},
		{"a map without a value object", []*planv1.FieldRule{rule("a", mapOf, `{"additionalProperties":true,"type":"object"}`, false)}, `has no "additionalProperties" object`},
		{"a rule twice", []*planv1.FieldRule{rule("a", leaf, str, false), rule("a", leaf, str, false)}, "appears twice"},
		{"a rule without a container", []*planv1.FieldRule{rule("a", planv1.Container_CONTAINER_UNSPECIFIED, str, false)}, "cannot hold children"},
	}
	for _, tt := range tests {
		_, err := compile.AssembleSchema(&planv1.MessagePlan{Message: "a.v1.Bad", Schema: closedFrag, Rules: tt.rules}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: err = %v, want it to say %q", tt.name, err, tt.says)
		}
	}
	if _, err := compile.AssembleSchema(&planv1.MessagePlan{Message: "a.v1.Bad", Schema: `[]`}, nil); err == nil {
		t.Error("a shell that is not an object was accepted")
	}
}

func TestAssembleSchemaFromAPlannedFixture(t *testing.T) {
	md := messageM(t, `
  // The name.
  string name = 1;
  optional Color colour = 2;
  Choice choice = 3;
  repeated Item items = 4 [(buf.validate.field).repeated.min_items = 1];
  map<int32, Item> by_id = 5;
  oneof o { string x = 6; string y = 7; }
  `)
	// The fixture's fields have no policy, which PlanMessage refuses, so the
	// plan is put together from the functions PlanMessage calls.
	plan := &planv1.MessagePlan{Message: string(md.FullName())}
	var err error
	if plan.Schema, err = compile.MessageSchema(md); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < md.Fields().Len(); i++ {
		fd := md.Fields().Get(i)
		s, err := compile.FieldSchema(fd)
		if err != nil {
			t.Fatal(err)
		}
		plan.Rules = append(plan.Rules, &planv1.FieldRule{Path: string(fd.Name()), Container: compile.ContainerOf(fd), Schema: s, Required: compile.FieldRequired(fd)})
		if child := compile.ChildMessage(fd); child != nil {
			for j := 0; j < child.Fields().Len(); j++ {
				cd := child.Fields().Get(j)
				cs, err := compile.FieldSchema(cd)
				if err != nil {
					t.Fatal(err)
				}
				plan.Rules = append(plan.Rules, &planv1.FieldRule{Path: string(fd.Name()) + "." + string(cd.Name()), Container: compile.ContainerOf(cd), Schema: cs, Required: compile.FieldRequired(cd)})
			}
		}
	}
	got, err := compile.AssembleSchema(plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"name":{"description":"The name.","type":"string"}`,
		`"required":["name"]`,
		`"choice":{"additionalProperties":false,"allOf":[{"not":{"required":["a","b"]}}],"properties":{"a":{"type":"string"},"b":{"additionalProperties":false,"type":"object"}},"type":"object"}`,
		`"items":{"items":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"},"minItems":1,"type":"array"}`,
		`"by_id":{"additionalProperties":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"},"propertyNames":`,
		`"allOf":[{"not":{"required":["x","y"]}}]`,
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("assembled schema lacks %s\n%s", want, got)
		}
	}
	again, _ := compile.AssembleSchema(plan, nil)
	if string(again) != string(got) {
		t.Error("assembling the same plan twice gave different bytes")
	}
}

// widePlan is a plan of n top-level messages with eight leaves each.
func widePlan(n int) *planv1.MessagePlan {
	plan := &planv1.MessagePlan{Message: "a.v1.Wide", Schema: closedFrag}
	for i := range n {
		parent := fmt.Sprintf("m%d", i)
		plan.Rules = append(plan.Rules, rule(parent, message, closedFrag, false))
		for j := range 8 {
			plan.Rules = append(plan.Rules, rule(fmt.Sprintf("%s.f%d", parent, j), leaf, `{"maxLength":64,"minLength":1,"type":"string"}`, j%2 == 0))
		}
	}
	return plan
}

func BenchmarkAssembleSchema(b *testing.B) {
	plan := widePlan(25) // 225 rules
	hideOdd := func(r *planv1.FieldRule) bool { return !strings.HasSuffix(r.GetPath(), "1") }
	for b.Loop() {
		if _, err := compile.AssembleSchema(plan, hideOdd); err != nil {
			b.Fatal(err)
		}
	}
}
