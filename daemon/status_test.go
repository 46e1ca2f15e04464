package garmd_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Each row of design 7.3's status table this part owns, produced for real:
// status, body, the headers that row names, and its ledger row.
func TestTheStatusTable(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	public := s.token("public")
	cases := []struct {
		name    string
		call    func() *answer
		status  int
		body    string
		outcome string
		kind    string
		tool    string
	}{
		{
			name:   "unknown route",
			call:   func() *answer { return s.post("/fix.v1.Records/Nothing", public, `{}`) },
			status: 404, body: `{"code":"not_found","message":"No such tool."}`,
			outcome: "denied", tool: "/fix.v1.Records/Nothing",
		},
		{
			name:   "a body that does not decode",
			call:   func() *answer { return s.post(addPath, public, `{"a": "forty"}`) },
			status: 400, body: `{"code":"invalid_argument","message":"The request does not match the tool's input."}`,
			outcome: "denied", tool: "calc.v1.add",
		},
		{
			name:   "an unknown JSON field",
			call:   func() *answer { return s.post(addPath, public, `{"a": 1, "b": 2, "c": 3}`) },
			status: 400, body: `{"code":"invalid_argument","message":"The request does not match the tool's input."}`,
			outcome: "denied", tool: "calc.v1.add",
		},
		{
			name: "a field the caller may not write",
			call: func() *answer {
				return s.post(renamePath, s.token("support"), `{"id": "r1", "name": "A", "reason": "x"}`)
			},
			status: 403, body: `{"code":"permission_denied","message":"The caller may not make this request."}`,
			outcome: "denied", tool: "fix.v1.rename",
		},
		{
			name:   "a runner-sourced field without exec",
			call:   func() *answer { return s.post(echoPath, public, `{"idempotencyKey": "k1"}`) },
			status: 403, body: `{"code":"permission_denied","message":"The caller may not make this request."}`,
			outcome: "denied", tool: "fix.v1.echo",
		},
		{
			name:   "no service serves the tool",
			call:   func() *answer { return s.post(pingPath, public, `{}`) },
			status: 503, body: `{"code":"unavailable","message":"The tool is not available right now."}`,
			outcome: "error", kind: "no_responders", tool: "fix.v1.ping",
		},
		{
			name:   "the tool does not answer in time",
			call:   func() *answer { return s.post(stallPath, public, `{"ms": 3000}`, "Garm-Timeout-Ms", "200") },
			status: 504, body: `{"code":"deadline_exceeded","message":"The tool did not answer in time."}`,
			outcome: "error", kind: "timeout", tool: "fix.v1.stall",
		},
		{
			name:   "a Garm-Timeout-Ms that is not a number",
			call:   func() *answer { return s.post(addPath, public, `{"a": 1, "b": 2}`, "Garm-Timeout-Ms", "soon") },
			status: 400, body: `{"code":"invalid_argument","message":"The request does not match the tool's input."}`,
			outcome: "denied", tool: "calc.v1.add",
		},
		{
			name: "a failure that is not a refusal code",
			call: func() *answer {
				return s.post(refusePath, public, `{"code": "500", "message": "db password is hunter2"}`)
			},
			status: 500, body: `{"code":"internal","message":"The call failed inside garm."}`,
			outcome: "error", kind: "tool_failed", tool: "fix.v1.refuse",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ans := c.call()
			if ans.status != c.status || string(ans.body) != c.body {
				t.Fatalf("%d %s\nwant %d %s", ans.status, ans.body, c.status, c.body)
			}
			if ans.header.Get("Garm-Catalogue-Digest") == "" || ans.header.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", ans.header)
			}
			row := s.row(ans.eventID())
			if row.GetOutcome() != c.outcome || row.GetErrorKind() != c.kind || row.GetTool() != c.tool || row.GetErrorDetail() == "" {
				t.Errorf("row outcome %q kind %q tool %q detail %q", row.GetOutcome(), row.GetErrorKind(), row.GetTool(), row.GetErrorDetail())
			}
			if strings.Contains(string(ans.body), "hunter2") {
				t.Error("the tool's words reached the caller")
			}
		})
	}
}

func TestEveryToolRefusalCodePassesThroughAsToolRefused(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	for _, code := range []string{"400", "403", "404", "409", "415", "422", "429", "502", "504"} {
		ans := s.post(refusePath, s.token("public"), `{"code": "`+code+`", "message": "the tool's secret words"}`)
		if strconv.Itoa(ans.status) != code {
			t.Errorf("code %s answered %d", code, ans.status)
		}
		if !strings.Contains(string(ans.body), `"code":"tool_refused"`) || !strings.Contains(string(ans.body), `"tool_code":"`+code+`"`) ||
			strings.Contains(string(ans.body), "secret words") {
			t.Errorf("code %s: body %s", code, ans.body)
		}
		row := s.row(ans.eventID())
		if row.GetOutcome() != "error" || row.GetErrorKind() != "tool_refused" || !strings.Contains(row.GetErrorDetail(), "secret words") {
			t.Errorf("code %s: row %v", code, row)
		}
	}
}

func TestOnlyPOSTIsServed(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	req, _ := http.NewRequest(http.MethodGet, s.url+addPath, nil)
	req.Header.Set("Authorization", "Bearer "+s.token("public"))
	ans := s.do(req)
	if ans.status != http.StatusMethodNotAllowed || ans.header.Get("Allow") != "POST" ||
		string(ans.body) != `{"code":"unimplemented","message":"Only POST is served here."}` {
		t.Fatalf("%d %v %s", ans.status, ans.header, ans.body)
	}
	if row := s.row(ans.eventID()); row.GetOutcome() != "denied" || row.GetTool() != addPath {
		t.Fatalf("row %v", row)
	}
}

func TestABodyOverTheLimitIsRefusedBeforeTheChain(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	body := `{"a": 1, "b": 2, "pad": "` + strings.Repeat("x", 16<<20) + `"}`
	ans := s.post(addPath, s.token("public"), body)
	if ans.status != http.StatusRequestEntityTooLarge || string(ans.body) != `{"code":"invalid_argument","message":"The request body is larger than garm accepts."}` {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	if ans.eventID() != "" {
		t.Fatal("a refused oversized body wrote a ledger row")
	}
}
