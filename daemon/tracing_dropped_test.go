package garmd_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
)

// TestSpansTheCollectorRefusesAreCountedAsDropped: an OTLP endpoint that
// refuses every export loses the call's spans, and garm_spans_dropped_total
// says so — the series the SpansDropped alert watches.
func TestSpansTheCollectorRefusesAreCountedAsDropped(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	}))
	t.Cleanup(refusing.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", refusing.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "20")
	s := startStack(t)
	if got := spansDropped(t, s); got != 0 {
		t.Fatalf("garm_spans_dropped_total = %d before any call", got)
	}
	if ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`); ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	eventually(t, "the refused spans counted", func() bool { return spansDropped(t, s) >= 1 })
}

var spansDroppedLine = regexp.MustCompile(`(?m)^garm_spans_dropped_total (\d+)$`)

func spansDropped(t *testing.T, s *stack) int {
	t.Helper()
	m := spansDroppedLine.FindStringSubmatch(s.metrics())
	if m == nil {
		t.Fatalf("/metrics serves no garm_spans_dropped_total:\n%s", s.metrics())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
