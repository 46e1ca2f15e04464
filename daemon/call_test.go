package garmd_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const (
	addPath    = "/calc.v1.Calculator/Add"
	getPath    = "/fix.v1.Records/GetRecord"
	renamePath = "/fix.v1.Records/Rename"
	refusePath = "/fix.v1.Records/Refuse"
	stallPath  = "/fix.v1.Records/Stall"
	echoPath   = "/fix.v1.Records/Echo"
	pingPath   = "/fix.v1.Unserved/Ping"
)

func TestACallSucceedsWithGarmsHeadersAndOneCompleteLedgerRow(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	ans := s.post(addPath, s.token("public"), `{"a": 40, "b": 2.5}`)
	if ans.status != http.StatusOK || string(ans.body) != `{"sum":42.5}` {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	if ct := ans.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	digest := ans.header.Get("Garm-Catalogue-Digest")
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != len("sha256:")+64 {
		t.Errorf("Garm-Catalogue-Digest %q", digest)
	}
	row := s.row(ans.eventID())
	want := &ledgerv1.Event{
		EventId: ans.eventID(), Tenant: "acme", App: "garmd", Outcome: "ok",
		Tool: "calc.v1.add", Method: addPath,
		PrincipalSubject: "user:pat@acme.example", PrincipalKind: "PRINCIPAL_KIND_USER", ChainDepth: 1,
		ClearanceEffective: "CLEARANCE_PUBLIC", CatalogueDigest: digest, DaemonVersion: "dev",
		CorrelationId: ans.eventID(), Surface: "http",
	}
	assertRow(t, row, want)
	if row.GetLatencyMs() <= 0 || row.GetTime() == nil || time.Since(row.GetTime().AsTime()) > time.Minute {
		t.Errorf("latency %v, time %v", row.GetLatencyMs(), row.GetTime())
	}
}

// assertRow compares a row with want on every column but time, latency and
// redaction_plan.
func assertRow(t *testing.T, got, want *ledgerv1.Event) {
	t.Helper()
	g := cloneRow(got)
	g.Time, g.LatencyMs = nil, 0
	if want.RedactionPlan == "" {
		g.RedactionPlan = ""
	}
	gj, _ := protojson.Marshal(g)
	wj, _ := protojson.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("ledger row\n got %s\nwant %s", gj, wj)
	}
}

func cloneRow(e *ledgerv1.Event) *ledgerv1.Event {
	b, _ := protojson.Marshal(e)
	out := &ledgerv1.Event{}
	_ = protojson.Unmarshal(b, out)
	return out
}

func TestBinaryRequestsAreAnsweredInBinary(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	req, _ := http.NewRequest(http.MethodPost, s.url+addPath, strings.NewReader("\x09\x00\x00\x00\x00\x00\x00\x44\x40\x11\x00\x00\x00\x00\x00\x00\x04\x40"))
	req.Header.Set("Authorization", "Bearer "+s.token("public"))
	req.Header.Set("Content-Type", "application/proto")
	ans := s.do(req)
	// sum = 42.5 as field 1, fixed64.
	if ans.status != http.StatusOK || ans.header.Get("Content-Type") != "application/proto" || string(ans.body) != "\x09\x00\x00\x00\x00\x00\x40\x45\x40" {
		t.Fatalf("%d %q %x", ans.status, ans.header.Get("Content-Type"), ans.body)
	}
	// An unknown field (99) in binary is refused, as in JSON.
	req, _ = http.NewRequest(http.MethodPost, s.url+addPath, strings.NewReader("\x09\x00\x00\x00\x00\x00\x00\x44\x40\x98\x06\x01"))
	req.Header.Set("Authorization", "Bearer "+s.token("public"))
	ans = s.do(req)
	if ans.status != http.StatusBadRequest || !strings.Contains(string(ans.body), `"invalid_argument"`) {
		t.Fatalf("unknown binary field: %d %s", ans.status, ans.body)
	}
	if row := s.row(ans.eventID()); row.GetOutcome() != "denied" || !strings.Contains(row.GetErrorDetail(), "contract does not describe") {
		t.Fatalf("row %v", row)
	}
}

func TestTheToolIsToldTheCallButNeverTheCallersAuthority(t *testing.T) {
	t.Parallel()
	s := startStack(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	before := time.Now()
	ans := s.post(echoPath, s.token("assistant>analyst"), `{"text": "hi"}`,
		"Traceparent", tp, "Tracestate", "vendor=a", "Garm-Correlation-Id", "order-7", "Garm-Timeout-Ms", "1500")
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	var res struct {
		Text           string `json:"text"`
		InvocationJSON string `json:"invocation_json"`
	}
	if err := json.Unmarshal(ans.body, &res); err != nil {
		t.Fatal(err)
	}
	inv := &toolv1.InvocationContext{}
	if err := protojson.Unmarshal([]byte(res.InvocationJSON), inv); err != nil {
		t.Fatal(err)
	}
	if inv.GetCallId() != ans.eventID() || inv.GetTraceparent() != tp || inv.GetTracestate() != "vendor=a" ||
		inv.GetAttribution().GetCorrelationId() != "order-7" || inv.GetAttribution().GetTenant() != "acme" ||
		inv.GetPrincipal().GetSubject() != "user:ana@acme.example" || inv.GetAgent() != "agent:support-assistant" ||
		len(inv.GetAct()) != 1 || inv.GetAct()[0].GetSubject() != "agent:support-assistant" {
		t.Fatalf("invocation %s", res.InvocationJSON)
	}
	deadline := inv.GetDeadline().AsTime()
	if deadline.Before(before.Add(1500*time.Millisecond)) || deadline.After(time.Now().Add(1500*time.Millisecond)) {
		t.Errorf("deadline %v is not the caller's 1500 ms", deadline)
	}
	for _, leak := range []string{"CLEARANCE", "pii-", "eyJ"} {
		if strings.Contains(res.InvocationJSON, leak) {
			t.Errorf("the invocation carries %q: %s", leak, res.InvocationJSON)
		}
	}
	row := s.row(ans.eventID())
	if row.GetPrincipalActor() != "agent:support-assistant" || row.GetChainDepth() != 2 || row.GetCorrelationId() != "order-7" {
		t.Errorf("row %v", row)
	}
}

func TestTheToolTimeoutCapsTheCallersDeadline(t *testing.T) {
	t.Parallel()
	s := startStack(t, withToolTimeout(700*time.Millisecond))
	start := time.Now()
	ans := s.post(stallPath, s.token("operator"), `{"ms": 5000}`, "Garm-Timeout-Ms", "60000")
	if ans.status != http.StatusGatewayTimeout || !strings.Contains(string(ans.body), `"deadline_exceeded"`) {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("the call took %s: the tool timeout did not cap the caller's", elapsed)
	}
	row := s.row(ans.eventID())
	if row.GetOutcome() != "error" || row.GetErrorKind() != "timeout" || row.GetTool() != "fix.v1.stall" {
		t.Fatalf("row %v", row)
	}
}
