package garmd_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

const (
	profilePath      = "/fix.v1.Profiles/GetProfile"
	profileCardPath  = "/fix.v1.Profiles/GetProfileCard"
	profileCardsPath = "/fix.v1.Profiles/ListProfileCards"
)

// tenantHash is design 7.7's per-tenant hash, computed here from the
// harness's key without garmd's code: hex of the first 16 bytes of
// HMAC-SHA256(HMAC-SHA256(key, tenant), value).
func tenantHash(tenant, value string) string {
	salt := hmac.New(sha256.New, []byte("a test hash key of more than sixteen bytes"))
	salt.Write([]byte(tenant))
	mac := hmac.New(sha256.New, salt.Sum(nil))
	mac.Write([]byte(value))
	return hex.EncodeToString(mac.Sum(nil)[:16])
}

func TestOneAnswerIsRedactedExactlyForThreeCallers(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	hashed := tenantHash("acme", "BUREAU-77-SECRET")
	cases := []struct {
		persona   string
		body      string
		redacted  uint32
		disclosed uint32
	}{
		{"support", `{"id":"P-100","display_name":"Ada Lovelace","email":"***@corp.com","phone":"*********4567",` +
			`"born":"1815-01-01T00:00:00Z","card_number":"411111******1111","last_ip":"10.1.2.0","home_page":"https://ada.example",` +
			`"bureau_ref":"` + hashed + `","notes":["[REDACTED]","[REDACTED]"],"summary":"Mathematicia…"}`, 10, 0},
		{"reviewer", `{"id":"P-100","display_name":"Ada Lovelace","email":"ada@corp.com","phone":"+442071234567",` +
			`"born":"1815-01-01T00:00:00Z","card_number":"411111******1111","last_ip":"10.1.2.77",` +
			`"home_page":"https://ada.example/private?token=secret","bureau_ref":"` + hashed + `",` +
			`"notes":["called twice","prefers email"],"summary":"Mathematician and writer, known for the Analytical Engine notes."}`, 4, 0},
		{"analyst", `{"id":"P-100","display_name":"Ada Lovelace","email":"ada@corp.com","phone":"+442071234567",` +
			`"born":"1815-12-10T09:30:00Z","national_id":"NI-SECRET-1815","card_number":"4111111111111111","last_ip":"10.1.2.77",` +
			`"home_page":"https://ada.example/private?token=secret","bureau_ref":"BUREAU-77-SECRET",` +
			`"notes":["called twice","prefers email"],"summary":"Mathematician and writer, known for the Analytical Engine notes."}`, 0, 1},
	}
	plans := map[string]string{}
	for _, tc := range cases {
		t.Run(tc.persona, func(t *testing.T) {
			ans := s.post(profilePath, s.token(tc.persona), `{"id": "P-100"}`)
			if ans.status != http.StatusOK || string(ans.body) != tc.body {
				t.Fatalf("%d\n got %s\nwant %s", ans.status, ans.body, tc.body)
			}
			row := s.row(ans.eventID())
			if row.GetOutcome() != "ok" || row.GetRedactionCount() != tc.redacted || row.GetDisclosedCount() != tc.disclosed {
				t.Errorf("row: outcome %q, redaction_count %d, disclosed_count %d; want ok, %d, %d",
					row.GetOutcome(), row.GetRedactionCount(), row.GetDisclosedCount(), tc.redacted, tc.disclosed)
			}
			if plan := row.GetRedactionPlan(); (plan == "") != (tc.redacted == 0) || (plan != "" && len(plan) != 16) {
				t.Errorf("redaction_plan %q with %d redactions", plan, tc.redacted)
			}
			plans[tc.persona] = row.GetRedactionPlan()
		})
	}
	if plans["support"] == plans["reviewer"] {
		t.Errorf("two shapes with different withholdings share the plan address %q", plans["support"])
	}
}

func TestACallerMissingTheToolsCompartmentIsToldItDoesNotExist(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	missing := s.post("/fix.v1.Profiles/NoSuchMethod", s.token("outsider"), `{}`)
	ans := s.post(profilePath, s.token("outsider"), `{"id": "P-100"}`)
	if ans.status != http.StatusNotFound || !bytes.Equal(ans.body, missing.body) {
		t.Fatalf("%d %s, a missing route says %d %s", ans.status, ans.body, missing.status, missing.body)
	}
	if row := s.row(ans.eventID()); row.GetTool() != "fix.v1.get_profile" || !strings.Contains(row.GetErrorDetail(), "compartment") {
		t.Errorf("row: tool %q, detail %q", row.GetTool(), row.GetErrorDetail())
	}
}

func TestValidationRefusalsListOnlyWhatTheCallerWasShown(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	const msg = `"code":"invalid_argument","message":"The request does not match the tool's input."`
	cases := []struct {
		name, persona, request string
		body                   string
		detail                 []string
	}{
		{"a standard rule on a shown field", "support", `{"id": "ab"}`,
			`{` + msg + `,"violations":[{"field":"id","rule":"string.min_len","message":"must be at least 3 characters"}]}`,
			[]string{"id", "string.min_len"}},
		{"a rule reading a field the caller cannot write is not listed", "support", `{"id": "A-123"}`,
			`{` + msg + `,"violations":[]}`,
			[]string{"profile.archived_needs_reason", "an archived profile is read only with a reason"}},
		{"the same rule for a caller who may write the field", "reviewer", `{"id": "A-123"}`,
			`{` + msg + `,"violations":[{"field":"","rule":"profile.archived_needs_reason","message":"an archived profile is read only with a reason"}]}`,
			[]string{"profile.archived_needs_reason"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ans := s.post(profilePath, s.token(tc.persona), tc.request)
			if ans.status != http.StatusBadRequest || string(ans.body) != tc.body {
				t.Fatalf("%d\n got %s\nwant %s", ans.status, ans.body, tc.body)
			}
			row := s.row(ans.eventID())
			if row.GetOutcome() != "denied" || row.GetTool() != "fix.v1.get_profile" {
				t.Errorf("row: outcome %q, tool %q", row.GetOutcome(), row.GetTool())
			}
			for _, d := range tc.detail {
				if !strings.Contains(row.GetErrorDetail(), d) {
					t.Errorf("error_detail %q does not carry %q", row.GetErrorDetail(), d)
				}
			}
		})
	}
}

func TestAValidationRefusalIsPinnedWithItsWholeRow(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ans := s.post(profilePath, s.token("support"), `{"id": "ab"}`)
	if ans.status != http.StatusBadRequest {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	assertRow(t, s.row(ans.eventID()), &ledgerv1.Event{
		EventId: ans.eventID(), Tenant: "acme", App: "garmd", Outcome: "denied",
		Tool: "fix.v1.get_profile", Method: profilePath,
		PrincipalSubject: "user:sam@acme.example", PrincipalKind: "PRINCIPAL_KIND_USER", ChainDepth: 1,
		ClearanceEffective: "CLEARANCE_INTERNAL", CompartmentsEffective: []string{"pii-contact"},
		ErrorDetail:     "id: [string.min_len] must be at least 3 characters",
		CatalogueDigest: ans.header.Get("Garm-Catalogue-Digest"), DaemonVersion: "dev", Surface: "http",
	})
}

func TestAValidRequestWithAReasonPasses(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ans := s.post(profilePath, s.token("reviewer"), `{"id": "A-123", "reason": "a court order"}`)
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
}

func TestACardIsProjectedForEachCaller(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	const head = `{"kind":"KIND_RECORD","subject_id":"P-100","title":"Ada Lovelace","state":"STATE_OPEN","body":[`
	const name = `{"label":"Name","value":"Ada Lovelace","field":"display_name"}`
	const email = `{"label":"Email","value":"ada@corp.com","field":"email","access":{"clearance":"CLEARANCE_CONFIDENTIAL","compartments":["pii-contact"]}}`
	const section = `{"section":{"title":"Identity","elements":[{"facts":{"facts":[{"label":"National id","value":"NI-SECRET-1815","field":"national_id"}]},` +
		`"access":{"clearance":"CLEARANCE_RESTRICTED","compartments":["pii-contact","pii-identity"]}}]}}`
	const text = `{"text":{"text":"Prefers email."}}`
	const actions = `"actions":[{"id":"open","label":"Open","style":"STYLE_PRIMARY"}]`
	cases := []struct {
		persona  string
		body     string
		redacted uint32
	}{
		{"support", head + `{"facts":{"facts":[` + name + `]}},` + text + `],` + actions +
			`,"disclosure":{"withheld_fields":["email","body[1].section.elements[0]","body[1]"]}}`, 3},
		{"reviewer", head + `{"facts":{"facts":[` + name + `,` + email + `]}},` + text + `],` + actions +
			`,"disclosure":{"withheld_fields":["body[1].section.elements[0]","body[1]"]}}`, 2},
		{"analyst", head + `{"facts":{"facts":[` + name + `,` + email + `]}},` + section + `,` + text + `],` + actions + `}`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.persona, func(t *testing.T) {
			ans := s.post(profileCardPath, s.token(tc.persona), `{"id": "P-100"}`)
			if ans.status != http.StatusOK || string(ans.body) != tc.body {
				t.Fatalf("%d\n got %s\nwant %s", ans.status, ans.body, tc.body)
			}
			if row := s.row(ans.eventID()); row.GetRedactionCount() != tc.redacted {
				t.Errorf("redaction_count %d, want %d", row.GetRedactionCount(), tc.redacted)
			}
			for _, secret := range []string{"NI-SECRET-1815"} {
				if tc.persona != "analyst" && bytes.Contains(ans.body, []byte(secret)) {
					t.Errorf("%s reached %s", secret, tc.persona)
				}
			}
		})
	}
}

func TestACardWhoseLabelTheCallerMissesIsNotFound(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	missing := s.post("/fix.v1.Profiles/NoSuchMethod", s.token("support"), `{}`)
	ans := s.post(profileCardPath, s.token("support"), `{"id": "P-SEALED"}`)
	if ans.status != http.StatusNotFound || !bytes.Equal(ans.body, missing.body) {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	row := s.row(ans.eventID())
	assertRowOutcome(t, row, "denied", "fix.v1.get_profile_card")
	if ans := s.post(profileCardPath, s.token("analyst"), `{"id": "P-SEALED"}`); ans.status != http.StatusOK {
		t.Errorf("the analyst, who reaches the label: %d %s", ans.status, ans.body)
	}
}

func TestACardInAListIsDroppedForACallerMissingItsLabel(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ans := s.post(profileCardsPath, s.token("support"), `{"ids": ["P-100", "P-SEALED", "P-200"]}`)
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s (%s)", ans.status, ans.body, s.row(ans.eventID()).GetErrorDetail())
	}
	if bytes.Contains(ans.body, []byte("Sealed")) || !bytes.Contains(ans.body, []byte("P-100")) || !bytes.Contains(ans.body, []byte("P-200")) {
		t.Errorf("the sealed card was not dropped alone: %s", ans.body)
	}
	// Each of the two cards shown withholds 3 nodes; the sealed card counts 1.
	if row := s.row(ans.eventID()); row.GetRedactionCount() != 7 {
		t.Errorf("redaction_count %d, want 7", row.GetRedactionCount())
	}
}

func TestAnInvalidCardFailsTheCallForEveryCaller(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	for _, persona := range []string{"support", "analyst"} {
		ans := s.post(profileCardPath, s.token(persona), `{"id": "P-BROKEN"}`)
		if ans.status != http.StatusInternalServerError || string(ans.body) != `{"code":"internal","message":"The call failed inside garm."}` {
			t.Fatalf("%s: %d %s", persona, ans.status, ans.body)
		}
		row := s.row(ans.eventID())
		if row.GetOutcome() != "error" || row.GetErrorKind() != "card_invalid" ||
			row.GetErrorDetail() != "the answer's card: body[0].facts.facts[0]: label CLEARANCE_INTERNAL is below the enclosing CLEARANCE_CONFIDENTIAL" {
			t.Errorf("%s: row outcome %q kind %q detail %q", persona, row.GetOutcome(), row.GetErrorKind(), row.GetErrorDetail())
		}
		if strings.Contains(row.GetErrorDetail(), "BROKEN-SECRET") || strings.Contains(row.GetErrorDetail(), "Broken record") {
			t.Errorf("the detail quotes the card: %q", row.GetErrorDetail())
		}
	}
}

func assertRowOutcome(t *testing.T, row *ledgerv1.Event, outcome, tool string) {
	t.Helper()
	if row.GetOutcome() != outcome || row.GetTool() != tool {
		t.Errorf("row: outcome %q tool %q, want %q %q", row.GetOutcome(), row.GetTool(), outcome, tool)
	}
}
