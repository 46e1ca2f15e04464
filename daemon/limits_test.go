package garmd_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A call over its tool's limit is answered 429 rate_limited naming the
// limit, with Retry-After and the rate-limit header fields over HTTP, and
// as an isError result with the same body over MCP; the metrics count it
// by tool and limit.
func TestACallOverItsLimitIsAnswered429OverHTTPAndIsErrorOverMCP(t *testing.T) {
	t.Parallel()
	s := startStack(t, withMCPOn(), withLimitsOf(t, rateLimit("calc.v1.add", "adds", 1, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT)))
	add := surfaceCall{route: addPath, tool: "calc.v1.add", args: `{"a":1,"b":2}`, authorization: "Bearer " + s.token("public")}
	if h := s.overHTTP(t, add); h.status != http.StatusOK {
		t.Fatalf("the first call: %d %s", h.status, h.body)
	}
	h := s.overHTTP(t, add)
	if h.status != http.StatusTooManyRequests || h.header.Get("Retry-After") == "" || h.header.Get("Ratelimit-Limit") != "1" ||
		h.header.Get("Ratelimit-Remaining") != "0" || h.header.Get("Ratelimit-Reset") != h.header.Get("Retry-After") {
		t.Fatalf("over the limit over HTTP: %d %v %s", h.status, h.header, h.body)
	}
	var body struct{ Code, Limit string }
	if err := json.Unmarshal(h.body, &body); err != nil || body.Code != "rate_limited" || body.Limit != "adds" {
		t.Fatalf("body %s", h.body)
	}
	m := s.overMCP(t, add)
	if m.status != http.StatusOK || !strings.Contains(string(m.body), `"isError":true`) || !strings.Contains(string(m.body), `\"limit\":\"adds\"`) {
		t.Fatalf("over the limit over MCP: %d %s", m.status, m.body)
	}
	if row := s.row(h.eventID()); row.GetLimitId() != "adds" || row.GetLimitKey() != "subject" {
		t.Fatalf("row: %v", row)
	}
	if _, metrics := s.admin("/metrics"); !strings.Contains(metrics, `garm_limit_refusals_total{limit="adds",tool="calc.v1.add"} 2`) {
		t.Fatalf("metrics lack the two refusals")
	}
}

// withLimitsOf is withLimits for a stack without governance.
func withLimitsOf(t testing.TB, plans ...*limitPlan) stackOption { return withLimits(t, plans...) }

// deleteStream removes a counter stream, as a bus that lost it would.
func deleteStream(t testing.TB, url, name string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// The listing and tools/list show each tool's limits that apply to the
// caller, before any call: a limit keyed on the agent only to a delegated
// caller.
func TestTheListingShowsTheLimitsThatApplyToTheCaller(t *testing.T) {
	t.Parallel()
	perAgent := rateLimit("fix.v1.get_record", "per_agent", 5, toolv1.Limit_WINDOW_MINUTE, toolv1.Limit_KEY_PART_AGENT)
	perSubject := rateLimit("fix.v1.get_record", "per_subject", 50, toolv1.Limit_WINDOW_HOUR, toolv1.Limit_KEY_PART_SUBJECT)
	s := startStack(t, withMCPOn(), withLimitsOf(t, perAgent, perSubject))
	limitsOf := func(persona string) string {
		ans := s.post("/garm.v1.ToolCatalogService/ListTools", s.token(persona), `{"audience":"AUDIENCE_AGENT"}`)
		var l struct {
			Tools []struct {
				FQN    string          `json:"fqn"`
				Limits json.RawMessage `json:"limits"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(ans.body, &l); err != nil {
			t.Fatalf("%d %s", ans.status, ans.body)
		}
		for _, tool := range l.Tools {
			if tool.FQN == "fix.v1.get_record" {
				return string(tool.Limits)
			}
		}
		t.Fatalf("%s is not listed fix.v1.get_record: %s", persona, ans.body)
		return ""
	}
	const subjectOnly = `[{"id":"per_subject","description":"At most so many calls, so the tool's upstream is not drained.","window":"hour","limit":50}]`
	if got := limitsOf("analyst"); got != subjectOnly {
		t.Fatalf("a person is shown %s", got)
	}
	if got := limitsOf("assistant>analyst"); !strings.Contains(got, `"id":"per_agent"`) || !strings.Contains(got, `"window":"minute","limit":5`) || !strings.Contains(got, `"id":"per_subject"`) {
		t.Fatalf("a delegated caller is shown %s", got)
	}
	list := func(persona string) string {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+s.token(persona))
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		return b.String()
	}
	if person, agent := list("analyst"), list("assistant>analyst"); !strings.Contains(person, `"dev.garm/limits":`+subjectOnly) || strings.Contains(person, "per_agent") || !strings.Contains(agent, `"id":"per_agent"`) {
		t.Fatalf("tools/list shows a person %s\nand a delegated caller %s", person, agent)
	}
}

// garmd --limits refuses to start when the counter streams are missing,
// naming them, rather than fail the first limited call.
func TestGarmdWithLimitsRefusesToStartWithoutItsCounterStreams(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	cfg := s.cfg
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Limits = true
	d, err := garmd.New(context.Background(), cfg)
	if err == nil {
		t.Fatalf("garmd started with --limits and no counter streams (%v)", d.Addr())
	}
	if !strings.Contains(err.Error(), "--limits: stream GARM_LIMITS_SECOND") {
		t.Fatalf("the refusal does not name the missing stream: %v", err)
	}
}

// A call refused by a limit spends no grant and opens no approval request:
// the same grant pays once the window has turned.
func TestALimitRefusalSpendsNoGrant(t *testing.T) {
	t.Parallel()
	s := startGovernedStack(t, withApprovals(), withLimits(t, rateLimit("appr.v1.pay", "one_a_second", 1, toolv1.Limit_WINDOW_SECOND, toolv1.Limit_KEY_PART_SUBJECT)))
	for attempt := 0; ; attempt++ {
		if attempt == 5 {
			t.Fatal("no attempt met the limit within one second")
		}
		// Early in a second, so both calls fall in it.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
		first := s.postRaw(payPath, payment, s.payHeaders(s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")))
		if first.status != http.StatusOK {
			t.Fatalf("the first payment: %d %s", first.status, first.body)
		}
		g := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
		refused := s.postRaw(payPath, payment, s.payHeaders(g))
		if refused.status == http.StatusOK {
			continue // the second turned between the two
		}
		if refused.status != http.StatusTooManyRequests || strings.Contains(string(refused.body), "approval") {
			t.Fatalf("over the limit with a grant: %d %s", refused.status, refused.body)
		}
		paid := s.payments.paid.Load()
		time.Sleep(1100 * time.Millisecond)
		if ok := s.postRaw(payPath, payment, s.payHeaders(g)); ok.status != http.StatusOK {
			t.Fatalf("the grant a limit refused, in the next window: %d %s", ok.status, ok.body)
		}
		if s.payments.paid.Load() != paid+1 {
			t.Fatal("the tool did not pay once more")
		}
		return
	}
}
