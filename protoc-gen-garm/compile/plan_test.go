package compile_test

import (
	"slices"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const planProto = `syntax = "proto3";
package plan.v1;
import "google/protobuf/timestamp.proto";
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.compartments) = {declared: [
  {name: "a"}, {name: "b"}, {name: "m"}, {name: "z"}
]};

service Svc {
  rpc Get(Req) returns (Res) { option (garm.tool.v1.tool) = {description: "Gets." verb: VERB_READ min_clearance: CLEARANCE_INTERNAL}; }
  rpc Echo(Res) returns (Res) { option (garm.tool.v1.tool) = {description: "Echoes." verb: VERB_READ min_clearance: CLEARANCE_INTERNAL}; }
}
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};
  optional string id = 1;
  string idempotency_key = 2 [(garm.tool.v1.field_policy) = {read: CLEARANCE_INTERNAL source: SOURCE_RUNNER on_deny: {mask: {}}}];
}
message Res {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL compartments: ["b", "a"]};
  Inner inner = 3;
  optional string email = 1 [(garm.tool.v1.field_policy) = {
    read: CLEARANCE_CONFIDENTIAL write: CLEARANCE_RESTRICTED compartments: ["z", "m", "z"]
    on_deny: {email_domain: {}} audit_on_read: true
  }];
  repeated Inner list = 4;
  map<string, Inner> by_key = 5;
  map<string, string> tags = 6;
  repeated google.protobuf.Timestamp times = 7;
  google.protobuf.Timestamp at = 8;
  string name = 9 [(garm.tool.v1.field_policy) = {read: CLEARANCE_PUBLIC on_deny: {mask: {}}}];
}
message Inner {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};
  optional string leaf = 2;
}
`

func planOf(t *testing.T) *planv1.PackagePlan {
	t.Helper()
	m := build(t, map[string]string{"plan/v1/plan.proto": planProto}, "plan/v1/plan.proto")
	if ds := compile.Lint(m, compile.CatalogueScope); ds.HasErrors() {
		t.Fatalf("the fixture does not lint clean:\n%s", ds)
	}
	plan, err := compile.PlanPackage(m.Packages[0])
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func rulesByPath(mp *planv1.MessagePlan) map[string]*planv1.FieldRule {
	rules := map[string]*planv1.FieldRule{}
	for _, r := range mp.GetRules() {
		rules[r.GetPath()] = r
	}
	return rules
}

func TestAPackagePlanHoldsEveryToolMessageOnceSortedByName(t *testing.T) {
	plan := planOf(t)
	var names []string
	for _, mp := range plan.GetMessages() {
		names = append(names, mp.GetMessage())
	}
	// Res is the output of Get and the input and output of Echo.
	if want := []string{"plan.v1.Req", "plan.v1.Res"}; plan.GetPackage() != "plan.v1" || !slices.Equal(names, want) {
		t.Errorf("package %q messages %q, want plan.v1 %q", plan.GetPackage(), names, want)
	}
}

func TestRulesAreDepthFirstParentsBeforeChildrenInFieldNumberOrder(t *testing.T) {
	res := planOf(t).GetMessages()[1]
	var paths []string
	for _, r := range res.GetRules() {
		paths = append(paths, r.GetPath())
	}
	want := []string{"email", "inner", "inner.leaf", "list", "list.leaf", "by_key", "by_key.leaf", "tags", "times", "at", "name"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths %q\nwant %q", paths, want)
	}
	if got := rulesByPath(res)["by_key.leaf"].GetNumbers(); !slices.Equal(got, []int32{5, 2}) {
		t.Errorf("by_key.leaf numbers = %v, want [5 2]", got)
	}
}

func TestAFieldPolicyResolvesWriteOnDenyAndCompartments(t *testing.T) {
	rules := rulesByPath(planOf(t).GetMessages()[1])
	omit := &toolv1.Redaction{Kind: &toolv1.Redaction_Omit_{Omit: &toolv1.Redaction_Omit{}}}
	for _, tc := range []struct {
		path         string
		read, write  toolv1.Clearance
		compartments []string
		onDeny       *toolv1.Redaction
		audit        bool
	}{
		// Its own policy: write as declared, compartments sorted and unique.
		{"email", toolv1.Clearance_CLEARANCE_CONFIDENTIAL, toolv1.Clearance_CLEARANCE_RESTRICTED, []string{"m", "z"},
			&toolv1.Redaction{Kind: &toolv1.Redaction_EmailDomain_{EmailDomain: &toolv1.Redaction_EmailDomain{}}}, true},
		// The message default: write defaults to read, on_deny to omit.
		{"inner", toolv1.Clearance_CLEARANCE_INTERNAL, toolv1.Clearance_CLEARANCE_INTERNAL, []string{"a", "b"}, omit, false},
		// A child takes its own message's default, not its parent's.
		{"inner.leaf", toolv1.Clearance_CLEARANCE_INTERNAL, toolv1.Clearance_CLEARANCE_INTERNAL, nil, omit, false},
		{"name", toolv1.Clearance_CLEARANCE_PUBLIC, toolv1.Clearance_CLEARANCE_PUBLIC, nil,
			&toolv1.Redaction{Kind: &toolv1.Redaction_Mask_{Mask: &toolv1.Redaction_Mask{}}}, false},
	} {
		r := rules[tc.path]
		if r.GetRead() != tc.read || r.GetWrite() != tc.write || !slices.Equal(r.GetCompartments(), tc.compartments) ||
			!proto.Equal(r.GetOnDeny(), tc.onDeny) || r.GetAuditOnRead() != tc.audit {
			t.Errorf("%s: read %v write %v compartments %q on_deny %v audit %v\nwant read %v write %v compartments %q on_deny %v audit %v",
				tc.path, r.GetRead(), r.GetWrite(), r.GetCompartments(), r.GetOnDeny(), r.GetAuditOnRead(),
				tc.read, tc.write, tc.compartments, tc.onDeny, tc.audit)
		}
	}
}

func TestEachRuleNamesWhereItsChildrenGo(t *testing.T) {
	rules := rulesByPath(planOf(t).GetMessages()[1])
	for path, want := range map[string]planv1.Container{
		"email":  planv1.Container_CONTAINER_LEAF,
		"inner":  planv1.Container_CONTAINER_MESSAGE,
		"list":   planv1.Container_CONTAINER_LIST_OF_MESSAGES,
		"by_key": planv1.Container_CONTAINER_MAP_OF_MESSAGES,
		"tags":   planv1.Container_CONTAINER_LEAF, // a map of scalars
		"times":  planv1.Container_CONTAINER_LEAF, // a list of an opaque message
		"at":     planv1.Container_CONTAINER_LEAF, // a well-known type
	} {
		if got := rules[path].GetContainer(); got != want {
			t.Errorf("%s: container %v, want %v", path, got, want)
		}
	}
}

func TestARunnerSourcedKeyIsMarkedAndNeverRequiredOfTheCaller(t *testing.T) {
	req := rulesByPath(planOf(t).GetMessages()[0])
	key := req["idempotency_key"]
	if !key.GetRunnerSourced() || key.GetRequired() {
		t.Errorf("idempotency_key: runner_sourced %v required %v, want true false", key.GetRunnerSourced(), key.GetRequired())
	}
	if req["id"].GetRunnerSourced() {
		t.Error("id is marked runner-sourced")
	}
}

func TestAnOpaqueRootHasAShellAndNoRules(t *testing.T) {
	m := build(t, map[string]string{"plan/v1/plan.proto": planProto}, "plan/v1/plan.proto")
	at := m.Packages[0].Files[0].Messages().ByName("Res").Fields().ByName("at").Message()
	mp, err := compile.PlanMessage(at)
	if err != nil {
		t.Fatal(err)
	}
	if mp.GetMessage() != "google.protobuf.Timestamp" || len(mp.GetRules()) != 0 || mp.GetSchema() == "" {
		t.Errorf("plan of Timestamp = %v, want a schema and no rules", mp)
	}
}

func TestPlanningARecursiveMessageFails(t *testing.T) {
	src := `syntax = "proto3";
package rec.v1;
import "garm/tool/v1/tool.proto";
message Node {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional string name = 1;
  repeated Node children = 2;
}
`
	m := build(t, map[string]string{"rec/v1/rec.proto": src}, "rec/v1/rec.proto")
	node := m.Packages[0].Files[0].Messages().ByName(protoreflect.Name("Node"))
	if _, err := compile.PlanMessage(node); err == nil {
		t.Error("PlanMessage of a recursive message succeeded; a plan is flat")
	}
}
