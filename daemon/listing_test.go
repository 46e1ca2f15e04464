package garmd_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

type listed struct {
	Digest string `json:"catalogue_digest"`
	Tools  []struct {
		FQN         string          `json:"fqn"`
		Method      string          `json:"method"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

func (s *stack) list(persona, body string) (*answer, listed) {
	s.t.Helper()
	ans := s.post("/garm.v1.ToolCatalogService/ListTools", s.token(persona), body)
	var l listed
	if ans.status == http.StatusOK {
		if err := json.Unmarshal(ans.body, &l); err != nil {
			s.t.Fatalf("%v: %s", err, ans.body)
		}
	}
	return ans, l
}

func fqns(l listed) []string {
	var out []string
	for _, t := range l.Tools {
		out = append(out, t.FQN)
	}
	return out
}

func TestListToolsShowsEachCallerWhatItMayCall(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	cases := map[string][]string{
		"analyst": {"calc.v1.add", "calc.v1.divide", "calc.v1.summarize", "fix.v1.echo", "fix.v1.get_profile", "fix.v1.get_profile_card",
			"fix.v1.get_record", "fix.v1.list_profile_cards", "fix.v1.ping", "fix.v1.refuse", "fix.v1.rename", "fix.v1.stall"},
		"support":  {"fix.v1.get_profile", "fix.v1.get_profile_card", "fix.v1.get_record", "fix.v1.list_profile_cards", "fix.v1.rename"},
		"operator": {"fix.v1.echo", "fix.v1.ping", "fix.v1.refuse", "fix.v1.stall"},
		"outsider": {"calc.v1.add", "calc.v1.divide", "calc.v1.summarize", "fix.v1.echo", "fix.v1.ping", "fix.v1.refuse", "fix.v1.stall"},
	}
	for persona, want := range cases {
		ans, l := s.list(persona, `{}`)
		if ans.status != http.StatusOK {
			t.Fatalf("%s: %d %s", persona, ans.status, ans.body)
		}
		if got := fqns(l); !slices.Equal(got, want) {
			t.Errorf("%s lists %v, want %v", persona, got, want)
		}
		if l.Digest != ans.header.Get("Garm-Catalogue-Digest") || l.Digest == "" {
			t.Errorf("%s: digest %q vs header %q", persona, l.Digest, ans.header.Get("Garm-Catalogue-Digest"))
		}
		if ans.eventID() != "" {
			t.Errorf("%s: a successful listing wrote a ledger row", persona)
		}
	}
}

func TestListToolsFollowsTheAudienceRule(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	_, runner := s.list("operator", `{"audience": "runner"}`)
	if got := fqns(runner); !slices.Equal(got, []string{"fix.v1.echo"}) {
		t.Errorf("RUNNER lists %v", got)
	}
	_, person := s.list("operator", `{"audience": "AUDIENCE_PERSON"}`)
	if len(person.Tools) != 0 {
		t.Errorf("PERSON lists %v", fqns(person))
	}
	ans, _ := s.list("operator", `{"audience": "robots"}`)
	if ans.status != http.StatusBadRequest || ans.eventID() == "" {
		t.Errorf("a bad audience: %d, event id %q", ans.status, ans.eventID())
	}
}

func TestTheListedInputSchemaLeavesOutWhatTheCallerMayNotWrite(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	schemaOf := func(persona, fqn string) string {
		_, l := s.list(persona, `{}`)
		for _, tool := range l.Tools {
			if tool.FQN == fqn {
				return string(tool.InputSchema)
			}
		}
		t.Fatalf("%s does not list %s", persona, fqn)
		return ""
	}
	if got := schemaOf("support", "fix.v1.rename"); strings.Contains(got, `"reason"`) || !strings.Contains(got, `"name"`) {
		t.Errorf("support (INTERNAL) is shown %s", got)
	}
	if got := schemaOf("analyst", "fix.v1.rename"); !strings.Contains(got, `"reason"`) {
		t.Errorf("the analyst (RESTRICTED) is not shown reason: %s", got)
	}
	if got := schemaOf("operator", "fix.v1.echo"); strings.Contains(got, `"idempotency`) || !strings.Contains(got, `"text"`) {
		t.Errorf("a runner-sourced field is shown: %s", got)
	}
}

func TestAnUnauthenticatedListingIsLedgered(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ans := s.post("/garm.v1.ToolCatalogService/ListTools", "", `{}`)
	if ans.status != http.StatusUnauthorized {
		t.Fatalf("%d", ans.status)
	}
	if row := s.row(ans.eventID()); row.GetTool() != "/garm.v1.ToolCatalogService/ListTools" || row.GetOutcome() != "denied" {
		t.Fatalf("row %v", row)
	}
}
