package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestLimitsReadEveryTermWithItsPosition(t *testing.T) {
	const yaml = `schema: v1
include: [proto]
limits:
  - id: per_subject
    tool: initiate_payment
    rate: {count: 5}
  - id: agent_reads
    tool_set: self-service
    description: Reads an agent makes.
    key: [tenant, agent]
    rate: {count: 600, window: hour}
    cost: 2
    soft: false
  - id: in_flight
    all_tools: true
    description: Calls at once per tenant.
    key: [tenant]
    concurrency: {in_flight: 20}
`
	m, err := Parse(testPath, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	u := func(v uint32) *uint32 { return &v }
	s := func(v string) *string { return &v }
	no := false
	want := []Limit{
		{ID: "per_subject", Tool: "initiate_payment", Rate: &Rate{Count: u(5)}, Line: 4, Column: 5,
			At: map[string]Position{"id": {4, 9}, "tool": {5, 11}, "rate": {6, 11}}},
		{ID: "agent_reads", ToolSet: "self-service", Description: s("Reads an agent makes."), Key: []string{"tenant", "agent"},
			Rate: &Rate{Count: u(600), Window: "hour"}, Cost: u(2), Soft: &no, Line: 7, Column: 5,
			At: map[string]Position{"id": {7, 9}, "tool_set": {8, 15}, "description": {9, 18}, "key": {10, 10}, "rate": {11, 11}, "cost": {12, 11}, "soft": {13, 11}}},
		{ID: "in_flight", AllTools: true, Description: s("Calls at once per tenant."), Key: []string{"tenant"},
			Concurrency: &Concurrency{InFlight: u(20)}, Line: 14, Column: 5,
			At: map[string]Position{"id": {14, 9}, "all_tools": {15, 16}, "description": {16, 18}, "key": {17, 10}, "concurrency": {18, 18}}},
	}
	if !reflect.DeepEqual(m.Limits, want) {
		t.Errorf("limits:\n got %+v\nwant %+v", m.Limits, want)
	}
}

func TestAMalformedLimitIsRefusedAtItsPosition(t *testing.T) {
	tests := []struct {
		name, limits string
		want         []string
	}{
		{"not a list", "limits: {id: x}\n", []string{`3:9: "limits" must be a list, not a mapping`}},
		{"no id", "limits:\n  - {tool: x, rate: {count: 1, window: minute}}\n", []string{`4:5: a limit needs an "id"`}},
		{"no target", "limits:\n  - {id: x}\n", []string{`4:5: a limit names what it applies to: one of "tool", "tool_set" or "all_tools: true"`}},
		{"two targets", "limits:\n  - {id: x, tool: a, tool_set: b}\n", []string{`4:5: a limit names one of "tool", "tool_set" or "all_tools", not several`}},
		{"all_tools false", "limits:\n  - {id: x, all_tools: false}\n", []string{`4:24: "all_tools" is true or left out; name a tool or a tool set instead`}},
		{"an unknown key part", "limits:\n  - {id: x, tool: a, key: [tenant, caller]}\n", []string{`4:36: key part "caller" is not one of tenant, subject, agent, tool`}},
		{"an empty key", "limits:\n  - {id: x, tool: a, key: []}\n", []string{`4:27: a limit's "key" must be a list of one or more of tenant, subject, agent, tool, not a list`}},
		{"an unknown window", "limits:\n  - {id: x, tool: a, rate: {count: 1, window: fortnight}}\n", []string{`4:47: a rate's "window" must be one of second, minute, hour, day, not "fortnight"`}},
		{"a negative count", "limits:\n  - {id: x, tool: a, rate: {count: -1}}\n", []string{`4:36: "count" must be a whole number from 0 to 4294967295, not -1`}},
		{"a misspelt term", "limits:\n  - {id: x, tool: a, inflight: 2}\n", []string{`4:22: unknown key "inflight" in a limit (known: id, tool, tool_set, all_tools, description, key, rate, concurrency, cost, soft)`}},
		{"soft as text", "limits:\n  - {id: x, tool: a, soft: \"yes\"}\n", []string{`4:28: "soft" must be true or false, not a string`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(testPath, []byte("schema: v1\ninclude: [proto]\n"+tc.limits))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			want := testPath + ":" + strings.Join(tc.want, "\n"+testPath+":")
			if err.Error() != want {
				t.Errorf("Parse error:\n%s\nwant:\n%s", err, want)
			}
		})
	}
}
