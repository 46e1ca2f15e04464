package listing_test

import (
	"encoding/json"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// deskFixture is a help desk whose tools differ in every way the listing
// decides on (testdata/desk/desk/v1/desk.proto).
const deskFixture = "testdata/desk"

const (
	public       = toolv1.Clearance_CLEARANCE_PUBLIC
	internal     = toolv1.Clearance_CLEARANCE_INTERNAL
	confidential = toolv1.Clearance_CLEARANCE_CONFIDENTIAL
	restricted   = toolv1.Clearance_CLEARANCE_RESTRICTED

	read        = toolv1.Verb_VERB_READ
	write       = toolv1.Verb_VERB_WRITE
	destructive = toolv1.Verb_VERB_DESTRUCTIVE

	agent  = toolv1.Audience_AUDIENCE_AGENT
	person = toolv1.Audience_AUDIENCE_PERSON
	runner = toolv1.Audience_AUDIENCE_RUNNER
)

// caller is a principal as step 1 would fold it, numbered by g.
type caller struct {
	clearance    toolv1.Clearance
	verbs        []toolv1.Verb
	compartments []string
	// scope nil is unscoped; non-nil (even empty) is a tool-set scope.
	scope []string
}

func (c caller) principal(t testing.TB, g *catalogue.Generation) *call.Principal {
	// Names the generation does not declare are dropped, as step 1 drops
	// them.
	set, kept, _ := g.CompartmentSet(c.compartments)
	p := &call.Principal{
		Subject:          "user:test",
		Clearance:        c.clearance,
		Compartments:     set,
		CompartmentNames: kept,
		Verbs:            call.VerbsOf(c.verbs...),
		Scoped:           c.scope != nil,
	}
	if c.scope != nil {
		p.ToolSets = map[string]bool{}
		for _, s := range c.scope {
			p.ToolSets[s] = true
		}
	}
	return p
}

// everyone holds every verb, compartment and clearance, unscoped.
var everyone = caller{clearance: restricted, verbs: []toolv1.Verb{read, write, destructive}, compartments: []string{"pii", "vip"}}

// listed is a ListTools answer, decoded.
type listed struct {
	Digest string `json:"catalogue_digest"`
	Tools  []struct {
		FQN            string   `json:"fqn"`
		Method         string   `json:"method"`
		Verb           string   `json:"verb"`
		Sets           []string `json:"sets"`
		Audience       []string `json:"audience"`
		ApprovalMode   string   `json:"approval_mode"`
		MaterialFields []string `json:"material_fields"`
		// A pointer, so a row without the key is told from false.
		DistinctApprover *bool           `json:"distinct_approver"`
		InputSchema      json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

func decode(t testing.TB, body []byte) listed {
	t.Helper()
	var l listed
	if err := json.Unmarshal(body, &l); err != nil {
		t.Fatalf("the listing is not JSON: %v\n%s", err, body)
	}
	return l
}

func (l listed) fqns() []string {
	out := []string{}
	for _, t := range l.Tools {
		out = append(out, t.FQN)
	}
	return out
}

// schemaOf is the input schema listed for fqn, decoded.
func (l listed) schemaOf(t testing.TB, fqn string) map[string]any {
	t.Helper()
	for _, tool := range l.Tools {
		if tool.FQN == fqn {
			var s map[string]any
			if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("%s is not listed", fqn)
	return nil
}
