package garmd_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestAnInvisibleToolAndAMissingRouteAnswerTheSame(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	outsider := s.token("outsider") // confidential, but without pii-contact
	invisible := s.post(getPath, outsider, `{"id": "r1"}`)
	missing := s.post("/fix.v1.Records/GetRecords", outsider, `{"id": "r1"}`)
	// A body that does not even decode is not decoded before visibility.
	undecodable := s.post(getPath, outsider, `{"id": 7, "nope": true}`)
	for name, ans := range map[string]*answer{"missing route": missing, "undecodable body": undecodable} {
		if ans.status != invisible.status || string(ans.body) != string(invisible.body) {
			t.Errorf("%s: %d %s, invisible tool: %d %s", name, ans.status, ans.body, invisible.status, invisible.body)
		}
		if !sameHeaders(ans.header, invisible.header) {
			t.Errorf("%s: headers differ:\n%v\n%v", name, ans.header, invisible.header)
		}
	}
	if invisible.status != http.StatusNotFound {
		t.Fatalf("%d", invisible.status)
	}
	row := s.row(invisible.eventID())
	if row.GetOutcome() != "denied" || !strings.Contains(row.GetErrorDetail(), "compartment") {
		t.Errorf("the invisible tool's row does not say which gate: %v", row)
	}
	if row := s.row(missing.eventID()); !strings.Contains(row.GetErrorDetail(), "no tool") {
		t.Errorf("the missing route's row does not say so: %v", row)
	}
}

// sameHeaders compares headers apart from the event id and the date.
func sameHeaders(a, b http.Header) bool {
	keys := func(h http.Header) []string {
		var out []string
		for k, v := range h {
			if k == "Garm-Event-Id" || k == "Date" {
				continue
			}
			out = append(out, k+"="+strings.Join(v, ","))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(keys(a), keys(b))
}

func TestEachGateHidesATool(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	cases := []struct {
		persona, path, body string
		status              int
		gate                string
	}{
		{"analyst", getPath, `{"id": "r1"}`, 200, ""},
		{"support", getPath, `{"id": "r1"}`, 200, ""},
		{"outsider", getPath, `{"id": "r1"}`, 404, "compartment"},
		{"public", getPath, `{"id": "r1"}`, 404, "clearance"},
		{"operator", getPath, `{"id": "r1"}`, 404, "compartment"},
		{"operator", addPath, `{"a": 1, "b": 1}`, 404, "tool sets"},
		{"public", renamePath, `{"id": "r1", "name": "x"}`, 404, "verb"},
		{"assistant>support", getPath, `{"id": "r1"}`, 200, ""},
		{"assistant>support", renamePath, `{"id": "r1", "name": "x"}`, 404, "verb"},
	}
	for _, c := range cases {
		ans := s.post(c.path, s.token(c.persona), c.body)
		if ans.status != c.status {
			t.Errorf("%s %s: %d %s", c.persona, c.path, ans.status, ans.body)
			continue
		}
		if c.gate != "" {
			if row := s.row(ans.eventID()); !strings.Contains(row.GetErrorDetail(), c.gate) {
				t.Errorf("%s %s: detail %q does not name %q", c.persona, c.path, row.GetErrorDetail(), c.gate)
			}
		}
	}
}

func TestAnAnswerHoldsOnlyWhatTheCallerMayRead(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	support := s.post(getPath, s.token("support"), `{"id": "r1"}`)
	if support.status != http.StatusOK {
		t.Fatalf("%d %s", support.status, support.body)
	}
	// Support is INTERNAL with pii-contact: email and street need
	// CONFIDENTIAL, the national id RESTRICTED and pii-identity.
	if want := `{"id":"r1","name":"Ada Lovelace","addresses":[{"city":"London"}]}`; string(support.body) != want {
		t.Errorf("support sees\n%s\nwant\n%s", support.body, want)
	}
	for _, secret := range []string{recordEmail, recordNationalID, recordStreet} {
		if strings.Contains(string(support.body), secret) {
			t.Errorf("%q reached a caller who may not read it", secret)
		}
	}
	row := s.row(support.eventID())
	if row.GetRedactionCount() != 3 || len(row.GetRedactionPlan()) != 16 {
		t.Errorf("redaction count %d plan %q", row.GetRedactionCount(), row.GetRedactionPlan())
	}
	analyst := s.post(getPath, s.token("analyst"), `{"id": "r1"}`)
	want := `{"id":"r1","name":"Ada Lovelace","email":"` + recordEmail + `","national_id":"` + recordNationalID + `","addresses":[{"city":"London","street":"` + recordStreet + `"}]}`
	if string(analyst.body) != want {
		t.Errorf("the analyst sees\n%s\nwant\n%s", analyst.body, want)
	}
	if row := s.row(analyst.eventID()); row.GetRedactionCount() != 0 {
		t.Errorf("the analyst's redaction count is %d", row.GetRedactionCount())
	}
}

func TestWithoutMCPItsPathsAnswerAsAMissingRoute(t *testing.T) {
	t.Parallel()
	s := startStack(t) // --mcp off
	token := s.token("support")
	missing := s.post("/fix.v1.Records/Nope", token, `{}`)
	for _, path := range []string{"/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		ans := s.post(path, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if ans.status != missing.status || string(ans.body) != string(missing.body) || !sameHeaders(ans.header, missing.header) {
			t.Errorf("%s: %d %s, a missing route: %d %s", path, ans.status, ans.body, missing.status, missing.body)
		}
	}
}
