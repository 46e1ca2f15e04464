package artifact_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	cataloguev1 "github.com/garm-dev/garm/gen/garm/catalogue/v1"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/proto"
)

// limited is a one-tool contract with two limits.
const limited = `syntax = "proto3";
package lim.v1;
import "garm/tool/v1/tool.proto";
service Svc {
  rpc Ask(Req) returns (Res) {
    option (garm.tool.v1.tool) = {
      description: "Asks." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC
      limits: [
        {id: "per_subject" description: "Per person." key: [KEY_PART_TENANT, KEY_PART_SUBJECT] rate: {count: 10 window: WINDOW_MINUTE}},
        {id: "tool_wide" description: "For everyone." key: [KEY_PART_TOOL] concurrency: {in_flight: 8}}
      ]
    };
  }
}
message Req { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string q = 1; }
message Res { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string a = 1; }
`

func tamperedLimits(t *testing.T, change func(c *cataloguev1.Catalogue)) []byte {
	t.Helper()
	dir := buildtest.Tree(t, map[string]string{"lim/v1/lim.proto": limited})
	c := proto.CloneOf(buildtest.Artifact(t, dir).Catalogue)
	change(c)
	data, err := artifact.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReadRefusesLimitsTheBuildWouldNotHaveWritten(t *testing.T) {
	t.Parallel()
	perSubject := func(c *cataloguev1.Catalogue) *planv1.LimitPlan { return c.Limits[0] }
	deployed := &planv1.LimitPlan{Tool: "lim.v1.ask", Origin: planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT, Limit: &toolv1.Limit{
		Id: "zz_daily", Description: "Per day.", Key: []toolv1.Limit_KeyPart{toolv1.Limit_KEY_PART_TENANT}, Cost: 1,
		Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{Count: 1000, Window: toolv1.Limit_WINDOW_DAY}},
	}}
	cases := []struct {
		name   string
		change func(c *cataloguev1.Catalogue)
		refuse string
	}{
		{"a contract limit dropped", func(c *cataloguev1.Catalogue) { c.Limits = c.Limits[1:] }, "a contract's limit is never dropped"},
		{"a contract limit loosened in place", func(c *cataloguev1.Catalogue) { perSubject(c).Limit.GetRate().Count = 11 }, "is not the contract's limit as declared"},
		{"a tightening that loosens", func(c *cataloguev1.Catalogue) {
			p := perSubject(c)
			p.Contract, p.Origin = proto.CloneOf(p.Limit), planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED
			p.Limit.GetRate().Count = 20
		}, "does not tighten the contract's"},
		{"a tightening that forgets its contract", func(c *cataloguev1.Catalogue) {
			p := perSubject(c)
			p.Origin = planv1.LimitOrigin_LIMIT_ORIGIN_TIGHTENED
			p.Limit.GetRate().Count = 5
		}, "does not carry the contract's limit"},
		{"a deployment limit with a contract's id", func(c *cataloguev1.Catalogue) {
			perSubject(c).Origin = planv1.LimitOrigin_LIMIT_ORIGIN_DEPLOYMENT
		}, "the contract declares a limit of that id"},
		{"no origin", func(c *cataloguev1.Catalogue) {
			c.Limits = append(c.Limits, proto.CloneOf(deployed))
			c.Limits[2].Origin = planv1.LimitOrigin_LIMIT_ORIGIN_UNSPECIFIED
		}, "has no origin"},
		{"a cost left unresolved", func(c *cataloguev1.Catalogue) {
			c.Limits = append(c.Limits, proto.CloneOf(deployed))
			c.Limits[2].Limit.Cost = 0
		}, "is not resolved"},
		{"a limit that admits nothing", func(c *cataloguev1.Catalogue) {
			c.Limits = append(c.Limits, proto.CloneOf(deployed))
			c.Limits[2].Limit.Cost = 1001
		}, "it admits no call"},
		{"a limit of no tool", func(c *cataloguev1.Catalogue) {
			c.Limits = append(c.Limits, proto.CloneOf(deployed))
			c.Limits[2].Tool = "lim.v1.zz_other"
		}, "the catalogue has no such tool"},
		{"out of order", func(c *cataloguev1.Catalogue) { c.Limits[0], c.Limits[1] = c.Limits[1], c.Limits[0] }, "are not sorted"},
		{"twice", func(c *cataloguev1.Catalogue) { c.Limits = append(c.Limits, c.Limits[1]) }, "are not sorted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := tamperedLimits(t, tc.change)
			for name, read := range map[string]func([]byte) (*artifact.Artifact, error){"Read": artifact.Read, "ReadToServe": artifact.ReadToServe} {
				if _, err := read(data); err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Errorf("%s: got %v, want a refusal containing %q", name, err, tc.refuse)
				}
			}
		})
	}
	data := tamperedLimits(t, func(c *cataloguev1.Catalogue) { c.Limits = append(c.Limits, deployed) })
	if _, err := artifact.Read(data); err != nil {
		t.Errorf("a sound deployment limit was refused: %v", err)
	}
}
