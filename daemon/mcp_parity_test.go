package garmd_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// surfaceCall is one call as both surfaces spell it: a route and a body
// for HTTP, a tool name and arguments for MCP, with the same caller and
// headers.
type surfaceCall struct {
	route, tool, args string
	// authorization is the whole Authorization header; "" sends none.
	authorization string
	// header pairs are added to both requests (a pair given twice is sent
	// twice).
	header []string
}

// overHTTP posts c to its route.
func (s *stack) overHTTP(t *testing.T, c surfaceCall) *answer {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}}
	return s.send(t, c.route, c.args, h, c)
}

// overMCP posts c as a tools/call, in the revision without _meta, from a
// client that declares nothing.
func (s *stack) overMCP(t *testing.T, c surfaceCall) *answer {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args + `}}`
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	return s.send(t, "/mcp", body, h, c)
}

func (s *stack) send(t *testing.T, path, body string, h http.Header, c surfaceCall) *answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Add(c.header[i], c.header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return &answer{status: resp.StatusCode, header: resp.Header, body: data, received: time.Now()}
}

// Same row for the same refusal: each refusal class, sent over HTTP and
// over MCP, is recorded with the same outcome, kind and detail. The chain
// is the one recorder; a surface that wrote its own rows, or none, for a
// class would show here.
func TestEveryRefusalGetsTheSameRowOverHTTPAndOverMCP(t *testing.T) {
	t.Parallel()
	trusted := newForger(t, "trusted-1")
	s := startGovernedStack(t, withMCPApprovals(t), withIssuer(forgedIssuer, trusted.jwks(nil).URL),
		withBounds(func(c *garmd.Config) { c.MaxInFlight, c.GrantJWKS = 2, c.JWKS[0] }),
		withLimits(t, rateLimit("calc.v1.add", "adds", 1, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_TOOL),
			rateLimit("calc.v1.divide", "divides", 100, toolv1.Limit_WINDOW_HOUR, toolv1.Limit_KEY_PART_TOOL)))
	// One call spends the add limit; the hour's counters are lost, so a
	// divide cannot be counted.
	if a := s.post(addPath, s.token("public"), `{"a":1,"b":2}`); a.status != http.StatusOK {
		t.Fatalf("the call that spends the limit: %d %s", a.status, a.body)
	}
	deleteStream(t, s.bus.url, wire.LimitHourStream)
	bearer := func(persona string) string { return "Bearer " + s.token(persona) }
	expired := validClaims(forgedIssuer)
	expired["exp"] = time.Now().Add(-2 * time.Minute).Unix()

	get := surfaceCall{route: getPath, tool: "fix.v1.get_record", args: `{"id":"r1"}`, authorization: bearer("support")}
	with := func(c surfaceCall, change func(*surfaceCall)) surfaceCall { change(&c); return c }
	cases := []struct {
		name string
		call surfaceCall
		// outcome and kind are what both rows must say.
		outcome, kind string
	}{
		{"no token", with(get, func(c *surfaceCall) { c.authorization = "" }), "denied", ""},
		{"an expired token", with(get, func(c *surfaceCall) { c.authorization = "Bearer " + trusted.sign(expired, nil) }), "denied", ""},
		{"a header sent twice", with(get, func(c *surfaceCall) { c.header = []string{"Garm-Correlation-Id", "a", "Garm-Correlation-Id", "b"} }), "denied", ""},
		{"an invisible tool", with(get, func(c *surfaceCall) { c.authorization = bearer("outsider") }), "denied", ""},
		{"a missing tool", with(get, func(c *surfaceCall) { c.route, c.tool = "/fix.v1.Records/GetRecords", "fix.v1.get_records" }), "denied", ""},
		{"an invalid argument", with(get, func(c *surfaceCall) { c.args = `{"id":"r1","nope":1}` }), "denied", ""},
		{"a grant required", surfaceCall{route: payPath, tool: "appr.v1.pay", args: payment, authorization: bearer("payer")}, "denied", ""},
		{"a tool's refusal", surfaceCall{route: "/fix.v1.Records/Refuse", tool: "fix.v1.refuse", args: `{"code":"404","message":"no such record"}`, authorization: bearer("operator")}, "error", "tool_refused"},
		{"over a limit", surfaceCall{route: addPath, tool: "calc.v1.add", args: `{"a":1,"b":2}`, authorization: bearer("public")}, "denied", ""},
		{"a limit that cannot be counted", surfaceCall{route: "/calc.v1.Calculator/Divide", tool: "calc.v1.divide", args: `{"dividend":1,"divisor":1}`, authorization: bearer("public")}, "error", "limit_unavailable"},
		{"a timeout", surfaceCall{route: "/fix.v1.Records/Stall", tool: "fix.v1.stall", args: `{"ms":3000}`, authorization: bearer("operator"), header: []string{"Garm-Timeout-Ms", "200"}}, "error", "timeout"},
	}
	for _, tc := range cases {
		h, m := s.overHTTP(t, tc.call), s.overMCP(t, tc.call)
		hr, mr := s.row(h.eventID()), s.row(m.eventID())
		if hr == nil || mr == nil {
			t.Errorf("%s: no row over HTTP (%d %s) or over MCP (%d %s)", tc.name, h.status, h.body, m.status, m.body)
			continue
		}
		sameRow(t, tc.name, atDeadline(hr), atDeadline(mr), tc.outcome, tc.kind)
	}

	// Overload: with the plane's slots held by calls in flight, both
	// surfaces shed, with a row each.
	var holders []*rawConn
	for range 2 {
		holder := s.dial(t)
		holder.startCall(getPath, s.token("support"), len(get.args), get.args[:3])
		holders = append(holders, holder)
	}
	eventually(t, "the slots taken", func() bool { return strings.Contains(s.metrics(), "garm_calls_in_flight 2") })
	h, m := s.overHTTP(t, get), s.overMCP(t, get)
	if h.status != http.StatusServiceUnavailable || m.status != http.StatusServiceUnavailable {
		t.Fatalf("overload: %d %s over HTTP, %d %s over MCP", h.status, h.body, m.status, m.body)
	}
	sameRow(t, "overload", s.row(h.eventID()), s.row(m.eventID()), "error", "overloaded")
	for _, holder := range holders {
		holder.write(get.args[3:])
		if resp := holder.answer(); resp.StatusCode != http.StatusOK {
			t.Errorf("a holder: %d", resp.StatusCode)
		}
	}
}

// atDeadline is row with a timeout's detail reduced to the class: at the
// deadline the tool and garmd both give up, and which is heard first is a
// race on either surface — the chain's timeout row either way.
func atDeadline(row *ledgerv1.Event) *ledgerv1.Event {
	if row.GetErrorKind() != "timeout" {
		return row
	}
	c := proto.Clone(row).(*ledgerv1.Event)
	if d := c.GetErrorDetail(); strings.Contains(d, "before the deadline") || strings.Contains(d, "gave up at the deadline") {
		c.ErrorDetail = "at the deadline"
	}
	return c
}

func sameRow(t *testing.T, name string, h, m *ledgerv1.Event, outcome, kind string) {
	t.Helper()
	if h.GetOutcome() != outcome || h.GetErrorKind() != kind {
		t.Errorf("%s: the HTTP row is %s/%s, want %s/%s", name, h.GetOutcome(), h.GetErrorKind(), outcome, kind)
	}
	if m.GetSurface() != "mcp" || h.GetSurface() != "http" {
		t.Errorf("%s: surfaces %q and %q", name, h.GetSurface(), m.GetSurface())
	}
	if h.GetOutcome() != m.GetOutcome() || h.GetErrorKind() != m.GetErrorKind() || h.GetErrorDetail() != m.GetErrorDetail() {
		hj, _ := json.Marshal(map[string]string{"outcome": h.GetOutcome(), "kind": h.GetErrorKind(), "detail": h.GetErrorDetail()})
		mj, _ := json.Marshal(map[string]string{"outcome": m.GetOutcome(), "kind": m.GetErrorKind(), "detail": m.GetErrorDetail()})
		t.Errorf("%s: the rows differ:\nHTTP %s\nMCP  %s", name, hj, mj)
	}
}
