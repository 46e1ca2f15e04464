package garmd_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestACallsLedgerLineCarriesItsTraceAndItsLatencyTheTraceIDAsExemplar(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startStack(t, withTracing(tr), withLogLedger())
	caller := newCallerTrace(0x50)
	ans := s.post(addPath, s.token("public"), `{"a": 40, "b": 2}`, "Traceparent", caller.header())
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	spans := tr.spans(t, caller.traceID, 6)
	server := root(t, spans, caller)

	var line string
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, `"msg":"garm.ledger"`) && strings.Contains(l, ans.eventID()) {
			line = l
		}
	}
	if !strings.Contains(line, `"trace_id":"`+caller.traceID.String()+`"`) ||
		!strings.Contains(line, `"span_id":"`+server.SpanContext.SpanID().String()+`"`) {
		t.Errorf("the call's ledger line does not carry its trace and garmd's span:\n%s", line)
	}

	req, err := http.NewRequest(http.MethodGet, s.adminURL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `# {trace_id="`+caller.traceID.String()+`"}`) {
		t.Errorf("no latency observation carries the call's trace id as exemplar:\n%s", grepLines(string(body), "garm_call"))
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
