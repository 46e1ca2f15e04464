package garmd_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// logRows are the garm.ledger lines garmd has logged, by event id.
func (s *stack) logRows() map[string]map[string]any {
	s.t.Helper()
	rows := map[string]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(s.logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			s.t.Fatalf("a log line is not JSON: %v: %s", err, sc.Text())
		}
		if line["msg"] == "garm.ledger" {
			id, _ := line["event_id"].(string)
			if rows[id] != nil {
				s.t.Fatalf("ledger row %s logged twice", id)
			}
			rows[id] = line
		}
	}
	return rows
}

func TestWithoutTheLedgerStreamEachCallIsOneLogLineWithEveryColumn(t *testing.T) {
	t.Parallel()
	s := startStack(t, withLogLedger())
	ok := s.post(getPath, s.token("support"), `{"id": "r1"}`)
	denied := s.post(getPath, s.token("outsider"), `{"id": "r1"}`)
	if ok.status != http.StatusOK || denied.status != http.StatusNotFound {
		t.Fatalf("%d %d", ok.status, denied.status)
	}
	rows := s.logRows()
	row := rows[ok.eventID()]
	if row == nil || rows[denied.eventID()] == nil {
		t.Fatalf("rows %v", rows)
	}
	for _, column := range []string{
		"event_id", "time", "tenant", "app", "feature", "run_id", "correlation_id", "causation_id", "budget_id", "tags",
		"latency_ms", "outcome", "error_kind", "tool", "principal_subject", "principal_actor", "principal_kind",
		"chain_depth", "clearance_effective", "compartments_effective", "redaction_plan", "redaction_count",
		"disclosed_count", "error_detail", "execution_subject", "catalogue_digest", "daemon_version", "method",
		"instance_rule", "rows_filtered", "filters_applied", "audit_only_verdicts", "rule_error_class",
		"limit_id", "limit_key",
	} {
		if _, ok := row[column]; !ok {
			t.Errorf("the log line lacks %s", column)
		}
	}
	if row["outcome"] != "ok" || row["tool"] != "fix.v1.get_record" || row["principal_subject"] != "user:sam@acme.example" ||
		row["catalogue_digest"] != ok.header.Get("Garm-Catalogue-Digest") || row["redaction_count"] != float64(3) {
		t.Errorf("row %v", row)
	}
	for _, secret := range []string{recordEmail, recordNationalID, recordStreet} {
		if strings.Contains(s.logs.String(), secret) {
			t.Errorf("%q reached the log", secret)
		}
	}
	if d := rows[denied.eventID()]; d["outcome"] != "denied" || !strings.Contains(d["error_detail"].(string), "compartment") {
		t.Errorf("denied row %v", d)
	}
}

func TestTheStartupReportSaysWhatGarmdIsAndWillDo(t *testing.T) {
	t.Parallel()
	s := startStack(t, withLogLedger())
	logs := s.logs.String()
	for _, want := range []string{
		`"msg":"garmd: starting"`,
		`"msg":"garmd: catalogue"`, `"producer":"garm-catalogue/library"`, `"schema_version":1`, `"compartments":2`, `"tools_with_rules":0`, `"instance_rules":0`, `"tools":12`,
		`"fqn":"fix.v1.rename","verb":"VERB_WRITE"`,
		`"msg":"garmd: listening"`, `"bus":"` + s.bus.url,
		`"msg":"garmd: trusted issuer"`, `"issuer":"` + s.idp.Issuer(),
		`"msg":"garmd: ledger"`, `log lines`,
		`"msg":"garmd: garbage collector","gogc":`, `"chosen_by":`,
		`"refresh":"read once from a file at start`,
		`approval grants (step 5): off (--grant-issuer)`,
		`MODE_GRANT (needs step 5)`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the startup report lacks %s", want)
		}
	}
}
