package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTheTracesFlagPrintsEachCallsSpanTree(t *testing.T) {
	o, err := parseFlags([]string{"--traces"}, io.Discard, io.Discard)
	if err != nil || o.Traces == nil {
		t.Fatalf("--traces: %v, %+v", err, o)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	o = testOptions(t)
	traces := &syncBuffer{}
	o.Traces = traces
	s := startStack(t, o)
	c := newClient(t, s)
	d := bankDemo()
	ans := c.call("/calc.v1.Calculator/Add", c.token(d.outsider, ""), `{"a": 40, "b": 2.5}`,
		"Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) && !strings.Contains(traces.String(), "calc.v1.add") {
		time.Sleep(50 * time.Millisecond)
	}
	tree := traces.String()
	for _, line := range []string{
		"trace 4bf92f3577b34da6a3ce929d0e0e4736\n",
		"└─ execute_tool calc.v1.add ",
		"   ├─ authenticate ",
		"   ├─ validate_input ",
		"   ├─ request calc.v1.Calculator.Add ",
		"   │  └─ calc.v1.add ",
		"   └─ redact ",
	} {
		if !strings.Contains(tree, line) {
			t.Errorf("the printed tree has no %q:\n%s", line, tree)
		}
	}
	// garmd's spans are garmd's, the calculator's the calculator's.
	if !strings.Contains(tree, "\n└─ execute_tool calc.v1.add ") || !regexp.MustCompile(`(?m)^└─ execute_tool calc\.v1\.add .*  \[garmd\]$`).MatchString(tree) ||
		!regexp.MustCompile(`(?m)^   │  └─ calc\.v1\.add .*  \[calculator\]$`).MatchString(tree) {
		t.Errorf("the tree does not tell the tool's span from garmd's:\n%s", tree)
	}
	if !strings.Contains(tree, "outcome=ok") || !strings.Contains(tree, "event_id="+ans.header.Get("Garm-Event-Id")) {
		t.Errorf("the tree does not say how the call ended or its ledger row:\n%s", tree)
	}
}
