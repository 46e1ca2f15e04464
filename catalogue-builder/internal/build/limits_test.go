package build_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/internal/build"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/manifest"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// limitsContract is a store of two tools: get_order, a read in the
// self-service set with no limit, and refund, destructive, whose contract
// limits it per subject and in flight. The set "unused" holds no tool.
const limitsContract = `syntax = "proto3";
package store.v1;
import "garm/tool/v1/tool.proto";
option (garm.tool.v1.tool_sets) = {declared: [
  {name: "self-service" description: "What a customer uses."},
  {name: "unused" description: "Holds nothing."}
]};
service Store {
  rpc GetOrder(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Reads an order." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC sets: ["self-service"]};
  }
  rpc Refund(Req) returns (Res) {
    option (garm.tool.v1.tool) = {
      description: "Refunds an order." verb: VERB_DESTRUCTIVE min_clearance: CLEARANCE_PUBLIC
      approval: {mode: MODE_GRANT max_grant_age_seconds: 300}
      audit: {level: LEVEL_AUDIT retain_days: 30 fail_closed: true}
      limits: [
        {id: "per_subject" description: "Refunds per person." key: [KEY_PART_SUBJECT, KEY_PART_TENANT] rate: {count: 10 window: WINDOW_HOUR}},
        {id: "at_once" description: "Refunds at once." key: [KEY_PART_TENANT] concurrency: {in_flight: 4}}
      ]
    };
  }
}
message Req { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string id = 1; }
message Res { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string id = 1; }
`

// buildWithLimits builds the store contract with a catalogue.yaml whose
// limits key holds limits (YAML, indented as the top level's value).
func buildWithLimits(t *testing.T, limits string) (*build.Result, error) {
	t.Helper()
	dir := buildtest.Tree(t, map[string]string{"proto/store/v1/store.proto": limitsContract})
	yaml := "schema: v1\ninclude: [proto]\n"
	if limits != "" {
		yaml += "limits:\n" + limits
	}
	path := filepath.Join(dir, "catalogue.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	m.Path = "catalogue.yaml"
	return build.Run(context.Background(), build.Input{Manifest: m, Producer: buildtest.Producer})
}

// describe is each effective limit as "<tool> <id> <origin>: <bound>".
func describe(limits []*planv1.LimitPlan) []string {
	var out []string
	for _, p := range limits {
		line := p.GetTool() + " " + p.GetLimit().GetId() + " " + strings.TrimPrefix(p.GetOrigin().String(), "LIMIT_ORIGIN_") + ": " + compile.DescribeLimit(p.GetLimit())
		if p.GetContract() != nil {
			line += " (contract: " + compile.DescribeLimit(p.GetContract()) + ")"
		}
		out = append(out, line)
	}
	return out
}

func TestTheContractsLimitsAreBuiltResolvedAndSorted(t *testing.T) {
	t.Parallel()
	res, err := buildWithLimits(t, "")
	if err != nil {
		t.Fatal(err)
	}
	got := describe(res.Artifact.Catalogue.GetLimits())
	want := []string{
		"store.v1.refund at_once CONTRACT: 4 in flight per tenant",
		"store.v1.refund per_subject CONTRACT: 10 per hour per tenant+subject",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("limits:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := res.Artifact.Catalogue.GetLimits()[1].GetLimit().GetCost(); c != 1 {
		t.Errorf("a rate without a cost was built with cost %d, want 1", c)
	}
}

func TestCatalogueYAMLTightensAndAddsByToolSetAndEveryTool(t *testing.T) {
	t.Parallel()
	res, err := buildWithLimits(t, `  - {id: per_subject, tool: refund, rate: {count: 3}, cost: 1}
  - {id: at_once, tool: store.v1.refund, concurrency: {in_flight: 2}, description: "Two refunds at once."}
  - id: reads
    tool_set: self-service
    description: Reads per agent.
    key: [tenant, agent]
    rate: {count: 600, window: hour}
  - id: tenant_day
    all_tools: true
    description: Calls per tenant per day.
    key: [tenant]
    rate: {count: 100000, window: day}
`)
	if err != nil {
		t.Fatal(err)
	}
	got := describe(res.Artifact.Catalogue.GetLimits())
	want := []string{
		"store.v1.get_order reads DEPLOYMENT: 600 per hour per tenant+agent",
		"store.v1.get_order tenant_day DEPLOYMENT: 100000 per day per tenant",
		"store.v1.refund at_once TIGHTENED: 2 in flight per tenant (contract: 4 in flight per tenant)",
		"store.v1.refund per_subject TIGHTENED: 3 per hour per tenant+subject (contract: 10 per hour per tenant+subject)",
		"store.v1.refund tenant_day DEPLOYMENT: 100000 per day per tenant",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("limits:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := res.Artifact.Catalogue.GetLimits()[2].GetLimit().GetDescription(); d != "Two refunds at once." {
		t.Errorf("a tightening's description is %q, want the entry's", d)
	}
	if d := res.Artifact.Catalogue.GetLimits()[3].GetLimit().GetDescription(); d != "Refunds per person." {
		t.Errorf("a tightening without a description has %q, want the contract's", d)
	}
}

func TestRestatingAContractLimitLeavesItTheContracts(t *testing.T) {
	t.Parallel()
	res, err := buildWithLimits(t, "  - {id: per_subject, tool: refund, key: [tenant, subject], rate: {count: 10, window: hour}}\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Artifact.Catalogue.GetLimits() {
		if p.GetOrigin() != planv1.LimitOrigin_LIMIT_ORIGIN_CONTRACT || p.GetContract() != nil {
			t.Errorf("%s %s: origin %v, contract %v; want the contract's, unchanged", p.GetTool(), p.GetLimit().GetId(), p.GetOrigin(), p.GetContract())
		}
	}
}

func TestCatalogueYAMLThatLoosensOrMisnamesALimitIsRefusedAtItsLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, limits string
		want         []string
	}{
		{"a higher count", "  - {id: per_subject, tool: refund, rate: {count: 11}}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund would loosen the contract's (10 per hour per tenant+subject): count 11, was 10; catalogue.yaml may only tighten a contract's limit`}},
		{"a lower count, made soft", "  - {id: per_subject, tool: refund, rate: {count: 9}, soft: true}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund would loosen the contract's (10 per hour per tenant+subject): count 9, was 10, soft, was hard; catalogue.yaml may only tighten a contract's limit`}},
		{"soft", "  - {id: per_subject, tool: refund, soft: true}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund would loosen the contract's (10 per hour per tenant+subject): soft, was hard; catalogue.yaml may only tighten a contract's limit`}},
		{"a higher in_flight", "  - {id: at_once, tool: refund, concurrency: {in_flight: 5}}\n", []string{
			`catalogue.yaml:4:5: limit "at_once" of store.v1.refund would loosen the contract's (4 in flight per tenant): in_flight 5, was 4; catalogue.yaml may only tighten a contract's limit`}},
		{"another kind", "  - {id: per_subject, tool: refund, concurrency: {in_flight: 1}}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund changes the contract's 10 per hour per tenant+subject: a concurrency bound, was a rate; catalogue.yaml tightens a contract's limit and never changes its kind, key or window, so give a new limit its own id`}},
		{"another key", "  - {id: per_subject, tool: refund, key: [tenant]}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund changes the contract's 10 per hour per tenant+subject: key tenant, was tenant+subject; catalogue.yaml tightens a contract's limit and never changes its kind, key or window, so give a new limit its own id`}},
		{"another window", "  - {id: per_subject, tool: refund, rate: {count: 1, window: day}}\n", []string{
			`catalogue.yaml:4:5: limit "per_subject" of store.v1.refund changes the contract's 10 per hour per tenant+subject: window day, was hour; catalogue.yaml tightens a contract's limit and never changes its kind, key or window, so give a new limit its own id`}},
		{"an unknown tool", "  - {id: x, tool: refnud, key: [tenant], rate: {count: 1, window: day}, description: X.}\n", []string{
			`catalogue.yaml:4:19: limit "x": "refnud" names no tool of the catalogue (did you mean "refund"?)`}},
		{"an undeclared set", "  - {id: x, tool_set: self-servce, key: [tenant], rate: {count: 1, window: day}, description: X.}\n", []string{
			`catalogue.yaml:4:23: limit "x": tool set "self-servce" is not declared (did you mean "self-service"?)`}},
		{"a set that holds no tool", "  - {id: x, tool_set: unused, key: [tenant], rate: {count: 1, window: day}, description: X.}\n", []string{
			`catalogue.yaml:4:23: limit "x": tool set "unused" holds no tool, so the limit would apply to nothing`}},
		{"an incomplete new limit", "  - {id: x, all_tools: true, rate: {count: 1, window: day}}\n", []string{
			`catalogue.yaml:4:5: limit "x": it needs a description: callers are shown it when they are refused`,
			`catalogue.yaml:4:5: limit "x": it needs a key: one or more of tenant, subject, agent, or tool alone`}},
		{"a new limit that admits nothing", "  - {id: x, tool: get_order, description: X., key: [tenant], rate: {count: 1, window: day}, cost: 2}\n", []string{
			`catalogue.yaml:4:5: limit "x": it admits no call: one call costs 2 and the rate admits 1 per day`}},
		{"both kinds", "  - {id: x, tool: get_order, description: X., key: [tenant], rate: {count: 1, window: day}, concurrency: {in_flight: 1}}\n", []string{
			`catalogue.yaml:4:5: limit "x": a limit is a rate or a concurrency bound, not both`}},
		{"one limit set twice", "  - {id: x, all_tools: true, description: X., key: [tenant], rate: {count: 9, window: day}}\n  - {id: x, tool: refund, rate: {count: 1}}\n", []string{
			`catalogue.yaml:5:5: limit "x" of store.v1.refund is also set by the entry on line 4: one entry per limit of a tool`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := buildWithLimits(t, tc.limits)
			var problems manifest.Problems
			if !errors.As(err, &problems) {
				t.Fatalf("build error %v, want the manifest's problems", err)
			}
			if got := err.Error(); got != strings.Join(tc.want, "\n") {
				t.Errorf("build error:\n%s\nwant\n%s", got, strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestASoftLimitCatalogueYAMLAddsToADestructiveToolIsWarnedOfAtItsLine(t *testing.T) {
	t.Parallel()
	res, err := buildWithLimits(t, "  - {id: soft_day, tool: refund, description: Refunds a day., key: [tenant], rate: {count: 100, window: day}, soft: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range res.Warnings {
		if d.Rule == "L55" {
			found = append(found, d.String())
		}
	}
	want := `warning: L55: catalogue.yaml:4: limit "soft_day" of store.v1.refund: it is soft on a VERB_DESTRUCTIVE tool: when the bus cannot be reached, destructive calls pass on each replica's share`
	if len(found) != 1 || found[0] != want {
		t.Errorf("L55 warnings %q, want [%q]", found, want)
	}
}
