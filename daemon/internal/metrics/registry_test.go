package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/metrics"
)

const ledgerHeader = `# HELP garm_ledger_rows_total Ledger rows by what the recorder did with them: recorded where they were meant to go, fell_back to the log line, or lost.
# TYPE garm_ledger_rows_total counter
`

const tokenCacheHeader = `# HELP garm_token_cache_lookups_total Lookups in the verified-token cache, by result (hit or miss).
# TYPE garm_token_cache_lookups_total counter
`

func TestLedgerCountsAreReadAtScrapeTime(t *testing.T) {
	var counts ledger.Counts
	m := metrics.New("test", metrics.Sources{Ledger: &counts})
	counts.Recorded.Add(41)
	counts.FellBack.Add(3)
	counts.Lost.Add(1)
	assertSeries(t, m, ledgerHeader+`
garm_ledger_rows_total{result="fell_back"} 3
garm_ledger_rows_total{result="lost"} 1
garm_ledger_rows_total{result="recorded"} 41
`, metrics.LedgerRowsName)

	counts.Recorded.Add(1)
	assertSeries(t, m, ledgerHeader+`
garm_ledger_rows_total{result="fell_back"} 3
garm_ledger_rows_total{result="lost"} 1
garm_ledger_rows_total{result="recorded"} 42
`, metrics.LedgerRowsName)
}

func TestTokenCacheCountsAreReadAtScrapeTime(t *testing.T) {
	hits, misses := uint64(7), uint64(2)
	m := metrics.New("test", metrics.Sources{TokenCache: func() (uint64, uint64) { return hits, misses }})
	assertSeries(t, m, tokenCacheHeader+`
garm_token_cache_lookups_total{result="hit"} 7
garm_token_cache_lookups_total{result="miss"} 2
`, metrics.TokenCacheName)

	hits++
	assertSeries(t, m, tokenCacheHeader+`
garm_token_cache_lookups_total{result="hit"} 8
garm_token_cache_lookups_total{result="miss"} 2
`, metrics.TokenCacheName)
}

func TestMissingSourcesReadZero(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	assertSeries(t, m, ledgerHeader+`
garm_ledger_rows_total{result="fell_back"} 0
garm_ledger_rows_total{result="lost"} 0
garm_ledger_rows_total{result="recorded"} 0
`+tokenCacheHeader+`
garm_token_cache_lookups_total{result="hit"} 0
garm_token_cache_lookups_total{result="miss"} 0
`, metrics.LedgerRowsName, metrics.TokenCacheName)
}

func TestBuildInfoCarriesTheVersion(t *testing.T) {
	m := metrics.New("v1.2.3", metrics.Sources{})
	assertSeries(t, m, `# HELP garm_build_info Always 1; version is the running garmd's build version.
# TYPE garm_build_info gauge
garm_build_info{version="v1.2.3"} 1
`, metrics.BuildInfoName)
}

func TestNothingOnTheDefaultRegistryIsExposed(t *testing.T) {
	intruder := prometheus.NewCounter(prometheus.CounterOpts{Name: "garm_intruder_total", Help: "Registered globally by someone else."})
	prometheus.MustRegister(intruder)
	t.Cleanup(func() { prometheus.Unregister(intruder) })
	intruder.Inc()

	body := scrape(t, metrics.New("test", metrics.Sources{}).Handler())
	if strings.Contains(body, "garm_intruder_total") {
		t.Fatalf("a series on the default registry is exposed:\n%s", body)
	}
}

func TestTwoInstancesKeepSeparateCounts(t *testing.T) {
	a := metrics.New("test", metrics.Sources{})
	b := metrics.New("test", metrics.Sources{})
	a.ObserveCall("calc.v1.add", "ok", "", time.Millisecond)
	assertSeries(t, a, callsHeader+`garm_calls_total{code="",outcome="ok",tool="calc.v1.add"} 1`+"\n", metrics.CallsName)
	if n := count(t, b, metrics.CallsName); n != 0 {
		t.Fatalf("the other instance has %d call series, want 0", n)
	}
}

func TestTheGoAndProcessCollectorsAreOnTheSameRegistry(t *testing.T) {
	body := scrape(t, metrics.New("test", metrics.Sources{}).Handler())
	want := []string{"\ngo_goroutines ", "\ngo_info{"}
	if runtime.GOOS == "linux" {
		want = append(want, "\nprocess_cpu_seconds_total ", "\nprocess_start_time_seconds ")
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("no %q in the exposition", strings.TrimSpace(w))
		}
	}
}

func TestTheHandlerServesTheTextExposition(t *testing.T) {
	m := metrics.New("test", metrics.Sources{})
	m.ObserveCall("calc.v1.add", "denied", "permission_denied", time.Millisecond)
	body := scrape(t, m.Handler())
	for _, w := range []string{
		`garm_calls_total{code="permission_denied",outcome="denied",tool="calc.v1.add"} 1`,
		`garm_call_duration_seconds_count{outcome="denied",tool="calc.v1.add"} 1`,
		`garm_build_info{version="test"} 1`,
	} {
		if !strings.Contains(body, w+"\n") {
			t.Errorf("no %s in the exposition", w)
		}
	}
}

// scrape serves h on a loopback listener and GETs it once, bounded.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("Content-Type %q, want the text exposition", ct)
	}
	return "\n" + string(body)
}

func TestNotificationCountsAreReadAtScrapeTimeWhenNotifyIsOn(t *testing.T) {
	published, failed, dropped := uint64(5), uint64(1), uint64(2)
	m := metrics.New("test", metrics.Sources{Notifications: func() (uint64, uint64, uint64) { return published, failed, dropped }})
	const header = `# HELP garm_notifications_total Rows of MODE_NOTIFY tools by what step 10 did with them: published to GARM_NOTIFY, failed to publish, or dropped (queue full, or garmd stopping).
# TYPE garm_notifications_total counter
`
	assertSeries(t, m, header+`
garm_notifications_total{result="dropped"} 2
garm_notifications_total{result="failed"} 1
garm_notifications_total{result="published"} 5
`, metrics.NotificationsName)
	off := metrics.New("test", metrics.Sources{})
	if strings.Contains(scrape(t, off.Handler()), metrics.NotificationsName) {
		t.Error("notify is off and its series is exposed")
	}
}
