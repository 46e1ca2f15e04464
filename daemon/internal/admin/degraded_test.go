package admin_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/admin"
)

func TestADegradedGarmdIsStillReadyAndSaysWhatIsDegraded(t *testing.T) {
	var degraded, notReady atomic.Pointer[string]
	set := func(p *atomic.Pointer[string], s string) { p.Store(&s) }
	set(&degraded, "")
	set(&notReady, "")
	var log bytes.Buffer
	url := serve(t, admin.Config{
		Ready: func() error {
			if r := *notReady.Load(); r != "" {
				return errors.New(r)
			}
			return nil
		},
		Degraded: func() string { return *degraded.Load() },
		Logger:   slog.New(slog.NewJSONHandler(&log, nil)),
	})
	const why = "JetStream has no quorum for GARM_AUDIT"
	for _, s := range []struct {
		notReady, degraded string
		wantStatus         int
		wantBody           string
	}{
		{"", "", http.StatusOK, admin.ReadyBody},
		{"", why, http.StatusOK, admin.DegradedPrefix + why},
		{"", why, http.StatusOK, admin.DegradedPrefix + why},
		// Not being ready wins over being degraded.
		{"not connected to the bus", why, http.StatusServiceUnavailable, "not connected to the bus"},
		{"", "", http.StatusOK, admin.ReadyBody},
	} {
		set(&notReady, s.notReady)
		set(&degraded, s.degraded)
		got := do(t, http.MethodGet, url+admin.ReadyzPath)
		if got.status != s.wantStatus || got.body != s.wantBody {
			t.Fatalf("not ready %q, degraded %q: GET /readyz = %d %q, want %d %q", s.notReady, s.degraded, got.status, got.body, s.wantStatus, s.wantBody)
		}
	}
	// Each change is logged once: ready, degraded, not ready, ready.
	if n := strings.Count(log.String(), `"msg":"garmd is ready, degraded"`); n != 1 {
		t.Fatalf("the degraded state was logged %d times, want once:\n%s", n, log.String())
	}
	if n := strings.Count(log.String(), "\n"); n != 4 {
		t.Fatalf("%d readiness lines, want 4:\n%s", n, log.String())
	}
}

func TestAReadyAnswerCarriesTheDetailLineAndANotReadyOneDoesNot(t *testing.T) {
	var ready atomic.Bool
	const detail = "catalogue bank version 7 (sha256:ab) signed by k1 (owners)"
	url := serve(t, admin.Config{
		Ready: func() error {
			if !ready.Load() {
				return errors.New("no catalogue generation is serving")
			}
			return nil
		},
		Detail: func() string { return detail },
	})
	if got := do(t, http.MethodGet, url+admin.ReadyzPath); got.status != http.StatusServiceUnavailable || strings.Contains(got.body, detail) {
		t.Fatalf("not ready: %d %q, want 503 without the detail", got.status, got.body)
	}
	ready.Store(true)
	if got := do(t, http.MethodGet, url+admin.ReadyzPath); got.status != http.StatusOK || got.body != admin.ReadyBody+"\n"+detail {
		t.Fatalf("ready: %d %q, want 200 %q", got.status, got.body, admin.ReadyBody+"\n"+detail)
	}
}
