package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/devkit/idp"
)

// approvalsGarmd answers as garmd's tool plane does for a MODE_GRANT tool
// with approvals on (docs/approvals.md): a call without an approval is
// refused grant_required naming request id; GET /approvals/id says where it
// stands (pending for the first polls, then verdict); a call presenting the
// approved id pays. It also serves the dev identity provider's token path.
type approvalsGarmd struct {
	verdict   string
	pendingN  int32
	polls     atomic.Int32
	mu        sync.Mutex
	presented []string
}

const waitRequestID = "aaaaaaaaaaaaaaaaaaaaaaaaaa"

func (g *approvalsGarmd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == idp.TokenPath:
		fmt.Fprint(w, "a.b.c")
	case r.Method == http.MethodGet && r.URL.Path == "/approvals/"+waitRequestID:
		status := "pending"
		if g.polls.Add(1) > g.pendingN {
			status = g.verdict
		}
		fmt.Fprintf(w, `{"id":%q,"status":%q}`, waitRequestID, status)
	case r.Method == http.MethodPost && r.URL.Path == "/bank.v1.Payments/Pay":
		a := r.Header.Get("Garm-Approval")
		g.mu.Lock()
		g.presented = append(g.presented, a)
		g.mu.Unlock()
		if a == waitRequestID && g.verdict == "approved" && g.polls.Load() > g.pendingN {
			fmt.Fprint(w, `{"paid":true}`)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"code":"grant_required","approval":{"id":%q,"url":"http://approvals.test/requests/%s"}}`, waitRequestID, waitRequestID)
	default:
		http.NotFound(w, r)
	}
}

func garmCallAt(t *testing.T, url string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	all := append([]string{"call", "/bank.v1.Payments/Pay", "--as", "payer", "--garmd", url, "--idp", url, "--dev", ""}, args...)
	return run(ctx, all, &out, &out), out.String()
}

func TestGarmCallWaitPrintsTheInboxURLWaitsForTheApprovalAndRetriesWithIt(t *testing.T) {
	t.Parallel()
	g := &approvalsGarmd{verdict: "approved", pendingN: 2}
	srv := httptest.NewServer(g)
	defer srv.Close()
	code, out := garmCallAt(t, srv.URL, "--wait", `{"amount_minor":"100"}`)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "waiting up to 10m0s for a decision on request "+waitRequestID, "http://approvals.test/requests/"+waitRequestID,
		"request "+waitRequestID+": approved", `"paid": true`)
	if strings.Index(out, "http://approvals.test/requests/") > strings.Index(out, ": approved") {
		t.Errorf("the inbox URL was not printed before the wait ended:\n%s", out)
	}
	if len(g.presented) != 2 || g.presented[0] != "" || g.presented[1] != waitRequestID {
		t.Errorf("the calls presented %q, want none and then the request", g.presented)
	}
}

func TestGarmCallWaitStopsAtADenialAndAtItsTimeoutWithoutRetrying(t *testing.T) {
	t.Parallel()
	denied := &approvalsGarmd{verdict: "denied", pendingN: 1}
	srv := httptest.NewServer(denied)
	defer srv.Close()
	code, out := garmCallAt(t, srv.URL, "--wait")
	if code != exitFailed || !strings.Contains(out, ": denied") || len(denied.presented) != 1 {
		t.Errorf("a denial: exit %d, %d calls:\n%s", code, len(denied.presented), out)
	}
	never := &approvalsGarmd{verdict: "approved", pendingN: 1 << 30}
	srv2 := httptest.NewServer(never)
	defer srv2.Close()
	code, out = garmCallAt(t, srv2.URL, "--wait", "--wait-timeout", "1500ms")
	if code != exitFailed || !strings.Contains(out, "--approval "+waitRequestID) || len(never.presented) != 1 {
		t.Errorf("no decision in time: exit %d, %d calls:\n%s", code, len(never.presented), out)
	}
}

func TestGarmCallPresentsAnApprovalAndRefusesOneBesideAGrant(t *testing.T) {
	t.Parallel()
	g := &approvalsGarmd{verdict: "approved"}
	srv := httptest.NewServer(g)
	defer srv.Close()
	g.polls.Store(1)
	code, out := garmCallAt(t, srv.URL, "--approval", waitRequestID)
	if code != exitOK || len(g.presented) != 1 || g.presented[0] != waitRequestID {
		t.Errorf("--approval: exit %d, presented %q:\n%s", code, g.presented, out)
	}
	if code, out := garmCallAt(t, srv.URL, "--approval", waitRequestID, "--grant", "a.b.c"); code != exitUsage {
		t.Errorf("--approval beside --grant: exit %d:\n%s", code, out)
	}
}
