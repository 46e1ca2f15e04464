package compile_test

import (
	"slices"
	"strings"
	"testing"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

const rulesTaxonomy = `syntax = "proto3";
package tax.v1;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.attributes) = {declared: [
  {name: "accounts" description: "The accounts the caller may act on." type: TYPE_STRING_LIST max_items: 8 max_len: 16}
]};
`

const rulesTools = `syntax = "proto3";
package ops.v1;
import "buf/validate/validate.proto";
import "garm/tool/v1/tool.proto";
import "tax/v1/tax.proto";
option (garm.tool.v1.attributes) = {declared: [
  {name: "accounts" description: "The accounts the caller may act on." type: TYPE_STRING_LIST max_items: 8 max_len: 16}
]};
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL};
  optional string account_id = 1 [(buf.validate.field).required = true, (buf.validate.field).string.max_len = 16];
}
message Res { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_INTERNAL}; optional string owner = 1; }
service Ops {
  rpc Zeta(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Z." verb: VERB_READ min_clearance: CLEARANCE_INTERNAL
      instance: {require: [{id: "own" description: "Own." expression: "request.account_id in principal.attrs.accounts"}]}};
  }
  rpc Alpha(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "A." verb: VERB_READ min_clearance: CLEARANCE_INTERNAL
      instance: {
        require: [{id: "own" description: "Own." expression: "request.account_id in principal.attrs.accounts" audit_only: true}]
        reveal: [{id: "shown" description: "Shown." expression: "response.owner in principal.attrs.accounts"}]
      }};
  }
}
`

func TestPlansRecordEveryRuleToolsByNameRulesInOrder(t *testing.T) {
	t.Parallel()
	m := build(t, map[string]string{"tax/v1/tax.proto": rulesTaxonomy, "ops/v1/ops.proto": rulesTools}, "ops/v1/ops.proto")
	if ds := compile.Lint(m, compile.CatalogueScope); ds.HasErrors() {
		t.Fatalf("lint:\n%s", ds)
	}
	if got := len(m.DeclaredAttributes()); got != 1 {
		t.Fatalf("an identical declaration in two files is %d attributes, want 1", got)
	}
	plans, err := compile.PlanRules(m, m.Packages[len(m.Packages)-1])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range plans {
		got = append(got, p.GetTool()+"/"+p.GetId()+"/"+strings.TrimPrefix(p.GetPhase().String(), "RULE_PHASE_"))
	}
	want := []string{"alpha/own/REQUIRE", "alpha/shown/REVEAL", "zeta/own/REQUIRE"}
	if !slices.Equal(got, want) {
		t.Fatalf("plans %v, want %v", got, want)
	}
	if !plans[0].GetAuditOnly() || plans[2].GetAuditOnly() {
		t.Error("audit_only is not carried into the plan")
	}
	if !slices.Equal(plans[1].GetReads(), []string{"principal.attrs.accounts", "response.owner"}) || plans[1].GetCostBound() == 0 {
		t.Errorf("reveal plan %v", plans[1])
	}
	if plans[0].GetPhase() != planv1.RulePhase_RULE_PHASE_REQUIRE {
		t.Error("phase lost")
	}
}

func TestAnAttributeDeclaredDifferentlyInTwoFilesIsRefused(t *testing.T) {
	t.Parallel()
	other := strings.Replace(rulesTools, "max_items: 8 max_len: 16}\n]};\nmessage", "max_items: 9 max_len: 16}\n]};\nmessage", 1)
	m := build(t, map[string]string{"tax/v1/tax.proto": rulesTaxonomy, "ops/v1/ops.proto": other}, "ops/v1/ops.proto")
	ds := compile.Lint(m, compile.CatalogueScope)
	if !strings.Contains(ds.String(), `error: L44: ops/v1/ops.proto: attribute "accounts" is declared differently in ops/v1/ops.proto`) &&
		!strings.Contains(ds.String(), `error: L44: tax/v1/tax.proto: attribute "accounts" is declared differently`) {
		t.Fatalf("lint:\n%s", ds)
	}
}

func TestPlansAreNotBuiltForARuleLintRefuses(t *testing.T) {
	t.Parallel()
	bad := strings.Replace(rulesTools, `expression: "request.account_id in principal.attrs.accounts"}]}};`, `expression: "request.account_id in principal.attrs.branches"}]}};`, 1)
	m := build(t, map[string]string{"tax/v1/tax.proto": rulesTaxonomy, "ops/v1/ops.proto": bad}, "ops/v1/ops.proto")
	if _, err := compile.PlanRules(m, m.Packages[len(m.Packages)-1]); err == nil || !strings.Contains(err.Error(), "principal.attrs.branches is not a declared attribute") {
		t.Fatalf("PlanRules = %v", err)
	}
}
