package garmd_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func (s *stack) admin(path string) (int, string) {
	s.t.Helper()
	resp, err := s.client.Get(s.adminURL + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// eventually polls cond until it holds, failing the test after waitTimeout.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, waitTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestReadinessFollowsTheBus(t *testing.T) {
	t.Parallel()
	s := startStack(t, withLogLedger())
	if status, body := s.admin("/readyz"); status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	if status, _ := s.admin("/healthz"); status != http.StatusOK {
		t.Fatalf("healthz %d", status)
	}
	if !strings.Contains(s.metrics(), "\ngarm_ready 1\n") {
		t.Fatalf("garm_ready is not 1 while ready:\n%s", s.metrics())
	}
	s.bus.stop()
	eventually(t, "readiness turning 503", func() bool {
		status, body := s.admin("/readyz")
		return status == http.StatusServiceUnavailable && strings.Contains(body, "bus")
	})
	if !strings.Contains(s.metrics(), "\ngarm_ready 0\n") {
		t.Fatalf("garm_ready is not 0 while /readyz answers 503:\n%s", s.metrics())
	}
	// While the bus is away a call fails 503 at once, with its row.
	ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`)
	if ans.status != http.StatusServiceUnavailable {
		t.Fatalf("a call without a bus: %d %s", ans.status, ans.body)
	}
	s.bus.start(t)
	eventually(t, "readiness returning to 200", func() bool {
		status, _ := s.admin("/readyz")
		return status == http.StatusOK
	})
	eventually(t, "garm_ready returning to 1", func() bool { return strings.Contains(s.metrics(), "\ngarm_ready 1\n") })
	if status, _ := s.admin("/healthz"); status != http.StatusOK {
		t.Fatalf("healthz %d", status)
	}
}

func TestMetricsCountCallsByToolAndOutcome(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	if ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`); ans.status != http.StatusOK {
		t.Fatalf("%d", ans.status)
	}
	if ans := s.post(getPath, s.token("outsider"), `{"id": "r1"}`); ans.status != http.StatusNotFound {
		t.Fatalf("%d", ans.status)
	}
	s.post("/some/probe/"+strings.Repeat("x", 40), "", `{}`)
	status, body := s.admin("/metrics")
	if status != http.StatusOK {
		t.Fatalf("%d", status)
	}
	for _, want := range []string{
		`tool="calc.v1.add"`,
		`outcome="ok"`,
		`outcome="denied"`,
		`garm_catalogue_info{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Nothing a caller sends becomes a label, and no token reaches here.
	for _, leak := range []string{"/some/probe", "eyJ", recordEmail, "fix.v1.get_record"} {
		if strings.Contains(body, leak) {
			t.Errorf("metrics expose %q", leak)
		}
	}
}
