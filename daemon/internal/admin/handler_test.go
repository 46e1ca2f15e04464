package admin_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/admin"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/metrics"
)

var client = &http.Client{Timeout: 10 * time.Second}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(body)}
}

func serve(t *testing.T, c admin.Config) string {
	t.Helper()
	srv := httptest.NewServer(admin.Handler(c))
	t.Cleanup(srv.Close)
	return srv.URL
}

func alwaysReady() error { return nil }

func TestHealthzSaysOkWhileTheProcessIsAlive(t *testing.T) {
	url := serve(t, admin.Config{Ready: func() error { return errors.New("not connected to the bus") }})
	got := do(t, http.MethodGet, url+admin.HealthzPath)
	if got.status != http.StatusOK || got.body != admin.AliveBody {
		t.Fatalf("GET /healthz = %d %q, want 200 %q even when not ready", got.status, got.body, admin.AliveBody)
	}
	if ct := got.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	head := do(t, http.MethodHead, url+admin.HealthzPath)
	if head.status != http.StatusOK || head.body != "" {
		t.Fatalf("HEAD /healthz = %d %q, want 200 and no body", head.status, head.body)
	}
}

func TestReadyzFollowsTheReadyFunctionWithTheReasonInTheBody(t *testing.T) {
	var reason atomic.Pointer[string]
	set := func(s string) { reason.Store(&s) }
	set("no catalogue generation is serving")
	url := serve(t, admin.Config{Ready: func() error {
		if r := *reason.Load(); r != "" {
			return errors.New(r)
		}
		return nil
	}})

	steps := []struct {
		reason     string
		wantStatus int
		wantBody   string
	}{
		{"no catalogue generation is serving", http.StatusServiceUnavailable, "no catalogue generation is serving"},
		{"", http.StatusOK, admin.ReadyBody},
		{"not connected to the bus", http.StatusServiceUnavailable, "not connected to the bus"},
	}
	for _, s := range steps {
		set(s.reason)
		got := do(t, http.MethodGet, url+admin.ReadyzPath)
		if got.status != s.wantStatus || got.body != s.wantBody {
			t.Fatalf("with reason %q: GET /readyz = %d %q, want %d %q", s.reason, got.status, got.body, s.wantStatus, s.wantBody)
		}
		head := do(t, http.MethodHead, url+admin.ReadyzPath)
		if head.status != s.wantStatus || head.body != "" {
			t.Fatalf("with reason %q: HEAD /readyz = %d %q, want %d and no body", s.reason, head.status, head.body, s.wantStatus)
		}
	}
}

func TestWithoutAReadyFunctionGarmdIsNeverReady(t *testing.T) {
	url := serve(t, admin.Config{})
	got := do(t, http.MethodGet, url+admin.ReadyzPath)
	if got.status != http.StatusServiceUnavailable || got.body == "" {
		t.Fatalf("GET /readyz = %d %q, want 503 with a reason", got.status, got.body)
	}
}

func TestAnErrorWithoutAMessageIsStillNotReady(t *testing.T) {
	url := serve(t, admin.Config{Ready: func() error { return errors.New("") }})
	got := do(t, http.MethodGet, url+admin.ReadyzPath)
	if got.status != http.StatusServiceUnavailable || got.body == "" || got.body == admin.ReadyBody {
		t.Fatalf("GET /readyz = %d %q, want 503 with a reason", got.status, got.body)
	}
}

func TestReadinessIsLoggedOnlyWhenItChanges(t *testing.T) {
	var (
		mu  sync.Mutex
		buf bytes.Buffer
	)
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	var ready atomic.Bool
	url := serve(t, admin.Config{Logger: log, Ready: func() error {
		if ready.Load() {
			return nil
		}
		return errors.New("not connected to the bus")
	}})
	for _, r := range []bool{false, false, true, true, true, false} {
		ready.Store(r)
		do(t, http.MethodGet, url+admin.ReadyzPath)
	}
	mu.Lock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	mu.Unlock()
	want := []string{`msg="garmd is not ready" reason="not connected to the bus"`, `msg="garmd is ready"`, `msg="garmd is not ready" reason="not connected to the bus"`}
	if len(lines) != len(want) {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %s, want it to contain %s", i, lines[i], w)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestMetricsServesGarmdsRegistry(t *testing.T) {
	var rows ledger.Counts
	m := metrics.New("v9.9.9", metrics.Sources{
		Ledger:     &rows,
		TokenCache: func() (uint64, uint64) { return 11, 4 },
	})
	url := serve(t, admin.Config{Ready: alwaysReady, Metrics: m.Handler()})

	m.ObserveCall("calc.v1.add", metrics.OutcomeDenied, "permission_denied", 3*time.Millisecond)
	m.ObserveCall("/calc.v1.Calc/Nope", metrics.OutcomeDenied, "not_found", time.Millisecond)
	m.SetCatalogue("sha256:1111", "garm-catalogue v1")
	m.SetCatalogue("sha256:2222", "garm-catalogue v2")
	rows.Recorded.Add(2)
	rows.FellBack.Add(1)

	got := do(t, http.MethodGet, url+admin.MetricsPath)
	if got.status != http.StatusOK {
		t.Fatalf("GET /metrics = %d %q", got.status, got.body)
	}
	for _, line := range []string{
		`garm_calls_total{code="permission_denied",outcome="denied",tool="calc.v1.add"} 1`,
		`garm_calls_total{code="not_found",outcome="denied",tool="-"} 1`,
		`garm_call_duration_seconds_count{outcome="denied",tool="calc.v1.add"} 1`,
		`garm_catalogue_info{digest="sha256:2222",producer="garm-catalogue v2"} 1`,
		`garm_ledger_rows_total{result="recorded"} 2`,
		`garm_ledger_rows_total{result="fell_back"} 1`,
		`garm_ledger_rows_total{result="lost"} 0`,
		`garm_token_cache_lookups_total{result="hit"} 11`,
		`garm_token_cache_lookups_total{result="miss"} 4`,
		`garm_build_info{version="v9.9.9"} 1`,
	} {
		if !strings.Contains(got.body, "\n"+line+"\n") {
			t.Errorf("no %s in /metrics", line)
		}
	}
	if n := strings.Count(got.body, "\ngarm_catalogue_info{"); n != 1 {
		t.Errorf("%d catalogue series, want exactly 1", n)
	}
	if strings.Contains(got.body, "Nope") {
		t.Errorf("a request path reached /metrics")
	}
}

func TestWithoutAMetricsHandlerMetricsIsNotFound(t *testing.T) {
	url := serve(t, admin.Config{Ready: alwaysReady})
	if got := do(t, http.MethodGet, url+admin.MetricsPath); got.status != http.StatusNotFound {
		t.Fatalf("GET /metrics = %d, want 404", got.status)
	}
}

func TestEveryOtherPathIsNotFound(t *testing.T) {
	url := serve(t, admin.Config{Ready: alwaysReady, Metrics: metrics.New("test", metrics.Sources{}).Handler()})
	paths := []string{
		"/", "/healthz/", "/HEALTHZ", "/readyz/x", "/metrics/", "/metricsx", "/debug/pprof/",
		"/calc.v1.Calc/Add", "/garm.v1.ToolCatalogService/ListTools", "/./healthz", "/x/../healthz",
	}
	for _, p := range paths {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			got := do(t, method, url+p)
			if got.status != http.StatusNotFound || got.body != "not found" {
				t.Errorf("%s %s = %d %q, want 404 %q", method, p, got.status, got.body, "not found")
			}
		}
	}
}

func TestOtherMethodsAreRefusedWithAllow(t *testing.T) {
	url := serve(t, admin.Config{Ready: alwaysReady, Metrics: metrics.New("test", metrics.Sources{}).Handler()})
	cases := []struct{ method, path, allow string }{
		{http.MethodPost, admin.HealthzPath, "GET, HEAD"},
		{http.MethodPut, admin.ReadyzPath, "GET, HEAD"},
		{http.MethodDelete, admin.HealthzPath, "GET, HEAD"},
		{http.MethodOptions, admin.ReadyzPath, "GET, HEAD"},
		{http.MethodPost, admin.MetricsPath, "GET"},
		{http.MethodHead, admin.MetricsPath, "GET"},
	}
	for _, c := range cases {
		got := do(t, c.method, url+c.path)
		if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d Allow %q, want 405 Allow %q", c.method, c.path, got.status, got.header.Get("Allow"), c.allow)
		}
	}
}
