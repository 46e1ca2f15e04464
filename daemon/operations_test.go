package garmd_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// metric is the value of the series line of /metrics that starts with
// series (name and labels, exactly as exposed), or -1 when there is none.
func (s *stack) metric(series string) float64 {
	s.t.Helper()
	status, body := s.admin("/metrics")
	if status != http.StatusOK {
		s.t.Fatalf("/metrics answered %d", status)
	}
	for line := range strings.Lines(body) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				s.t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func TestMetricsCountGrantSpendsAuditAndPublishesByStreamAndKeySetFetches(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t)
	g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "TASK-7")
	if ans := s.post(payPath, s.token("payer"), payment, "Garm-Grant", g); ans.status != http.StatusOK {
		t.Fatalf("the payment: %d %s", ans.status, ans.body)
	}
	if ans := s.post(payPath, s.token("payer"), payment, "Garm-Grant", g); ans.status != http.StatusForbidden {
		t.Fatalf("the replay: %d %s", ans.status, ans.body)
	}
	for series, want := range map[string]float64{
		`garm_grant_spends_total{result="spent"}`:                                                   1,
		`garm_grant_spends_total{result="already_spent"}`:                                           1,
		`garm_grant_spends_total{result="unavailable"}`:                                             0,
		`garm_jetstream_publishes_total{result="ok",stream="grants_spent"}`:                         1,
		`garm_jetstream_publishes_total{result="refused",stream="grants_spent"}`:                    1,
		`garm_jetstream_publishes_total{result="timeout",stream="grants_spent"}`:                    0,
		`garm_audit_write_failures_total`:                                                           0,
		`garm_bus_connected`:                                                                        1,
		`garm_bus_reconnects_total`:                                                                 0,
		`garm_key_set_fetches_total{issuer="` + s.cfg.Issuers[0] + `",result="failed",use="token"}`: 0,
	} {
		if got := s.metric(series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	// Both key sets were fetched once, for the token and for the grant.
	for _, use := range []string{"token", "grant"} {
		series := `garm_key_set_fetches_total{issuer="` + s.cfg.Issuers[0] + `",result="ok",use="` + use + `"}`
		if got := s.metric(series); got != 1 {
			t.Errorf("%s = %v, want 1", series, got)
		}
		if age := s.metric(`garm_key_set_age_seconds{issuer="` + s.cfg.Issuers[0] + `",use="` + use + `"}`); age < 0 {
			t.Errorf("the %s key set has no age", use)
		}
	}
	// The audit rows (the payment's intent and outcome, the replay's
	// outcome at least) and the ledger batches were published and
	// acknowledged, none otherwise.
	if got := s.metric(`garm_jetstream_publishes_total{result="ok",stream="audit"}`); got < 3 {
		t.Errorf("audit publishes acknowledged: %v, want at least 3", got)
	}
	for _, result := range []string{"refused", "timeout", "error"} {
		if got := s.metric(`garm_jetstream_publishes_total{result="` + result + `",stream="audit"}`); got != 0 {
			t.Errorf("audit publishes %s: %v, want 0", result, got)
		}
	}
	eventually(t, "a ledger batch acknowledged", func() bool {
		return s.metric(`garm_jetstream_publishes_total{result="ok",stream="ledger"}`) >= 1
	})
}

func TestTheBusConnectionIsSeenInTheMetricsAndTheStructuredLog(t *testing.T) {
	t.Parallel()
	s := startStack(t, withLogLedger())
	s.bus.stop()
	eventually(t, "garm_bus_connected reading 0", func() bool { return s.metric("garm_bus_connected") == 0 })
	s.bus.start(t)
	eventually(t, "garm_bus_connected reading 1", func() bool { return s.metric("garm_bus_connected") == 1 })
	if got := s.metric("garm_bus_reconnects_total"); got != 1 {
		t.Fatalf("garm_bus_reconnects_total = %v, want 1", got)
	}
	// Both events are JSON lines of garmd's log, not plain text.
	for _, msg := range []string{"garmd: lost the bus connection; reconnecting", "garmd: the bus connection is back"} {
		line := regexp.MustCompile(`(?m)^\{.*"msg":"` + regexp.QuoteMeta(msg) + `".*\}$`)
		if !line.MatchString(s.logs.String()) {
			t.Errorf("the log has no JSON line %q:\n%s", msg, s.logs.String())
		}
	}
}
