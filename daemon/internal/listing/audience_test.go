package listing

import (
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

func TestTheAudienceRule(t *testing.T) {
	const (
		unspecified = toolv1.Audience_AUDIENCE_UNSPECIFIED
		agent       = toolv1.Audience_AUDIENCE_AGENT
		person      = toolv1.Audience_AUDIENCE_PERSON
		runner      = toolv1.Audience_AUDIENCE_RUNNER
		future      = toolv1.Audience(9)
	)
	cases := []struct {
		name     string
		declared []toolv1.Audience
		asked    toolv1.Audience
		listed   bool
	}{
		{"none declared, agent asked", nil, agent, true},
		{"none declared, unspecified asked reads as agent", nil, unspecified, true},
		{"none declared, person asked", nil, person, false},
		{"none declared, runner asked", nil, runner, false},
		{"person declared, person asked", []toolv1.Audience{person}, person, true},
		{"person declared, agent asked", []toolv1.Audience{person}, agent, false},
		{"person and agent declared, agent asked", []toolv1.Audience{person, agent}, agent, true},
		{"runner declared, runner asked", []toolv1.Audience{runner}, runner, true},
		{"runner declared, agent asked", []toolv1.Audience{runner}, agent, false},
		{"unspecified declared reads as agent", []toolv1.Audience{unspecified}, agent, true},
		{"unspecified declared is not person", []toolv1.Audience{unspecified}, person, false},
		{"an audience this build has no name for admits nobody", []toolv1.Audience{future}, agent, false},
		{"an unknown audience beside a known one", []toolv1.Audience{future, person}, person, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked, ok := audienceBit(tc.asked)
			if !ok {
				t.Fatalf("%v cannot be asked for", tc.asked)
			}
			if got := admitted(tc.declared)&asked != 0; got != tc.listed {
				t.Fatalf("listed %v, want %v", got, tc.listed)
			}
		})
	}
	if _, ok := audienceBit(toolv1.Audience(9)); ok {
		t.Fatal("an unknown audience can be asked for")
	}
}
