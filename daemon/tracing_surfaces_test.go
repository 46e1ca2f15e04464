package garmd_test

import (
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	garmd "github.com/garm-dev/garm/daemon"
)

func withMCPOn() stackOption { return func(c *garmd.Config) { c.MCP = true } }

// mcpTracedCall is a tools/call on the 2025-11-25 revision, its trace context in
// _meta.
func (s *stack) mcpTracedCall(token, name, arguments, traceparent string) *answer {
	s.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + arguments +
		`,"_meta":{"traceparent":"` + traceparent + `"}}}`
	return s.post("/mcp", token, body, "Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-11-25")
}

func TestAnMCPCallIsOneTraceWithTheMCPAttributes(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startStack(t, withTracing(tr), withMCPOn())
	caller := newCallerTrace(0x20)
	ans := s.mcpTracedCall(s.token("public"), "calc.v1.add", `{"a": 40, "b": 2}`, caller.header())
	if ans.status != http.StatusOK || !strings.Contains(string(ans.body), `"result"`) {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	spans := tr.spans(t, caller.traceID, 6)
	root(t, spans, caller)
	// The chain is the one gate: it authenticates once, in the span the
	// endpoint lent it.
	want := trim(`
	tools/call calc.v1.add server garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.surface=mcp garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add mcp.method.name=tools/call mcp.protocol.version=2025-11-25
	  authenticate internal garm.authn.token_cache_hit=false
	  validate_input internal
	  request calc.v1.Calculator.Add client messaging.destination.name=calc.v1.Calculator.Add messaging.operation.name=request messaging.operation.type=send messaging.system=nats
	    calc.v1.add server garm.outcome=ok garm.tool.fqn=calc.v1.add messaging.destination.name=calc.v1.Calculator.Add messaging.system=nats
	  redact internal
	`)
	if got := renderTree(spans, trace.SpanID{}); got != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}

	// A call refused for its parameters is refused by the chain once it
	// knows who called, with a row; its span says so.
	refused := newCallerTrace(0x21)
	if ans := s.mcpTracedCall(s.token("public"), "calc.v1.add", `[1]`, refused.header()); !strings.Contains(string(ans.body), `"error"`) {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	spans = tr.spans(t, refused.traceID, 2)
	root(t, spans, refused)
	want = trim(`
	tools/call server error.type=invalid_argument garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.surface=mcp garm.version=* gen_ai.operation.name=execute_tool mcp.method.name=tools/call mcp.protocol.version=2025-11-25 status=error:invalid_argument
	  authenticate internal garm.authn.token_cache_hit=false
	`)
	if got := renderTree(spans, trace.SpanID{}); got != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}
}

func TestASpanForAnInvisibleToolIsAMissingRoutes(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startStack(t, withTracing(tr), withMCPOn())
	outsider := s.token("outsider") // confidential, but without pii-contact
	calls := map[string]func(traceparent string) *answer{
		"an invisible tool": func(tp string) *answer {
			return s.post(getPath, outsider, `{"id": "r1"}`, "Traceparent", tp)
		},
		"a missing route": func(tp string) *answer {
			return s.post("/fix.v1.Records/GetRecords", outsider, `{"id": "r1"}`, "Traceparent", tp)
		},
		"an invisible tool over MCP": func(tp string) *answer {
			return s.mcpTracedCall(outsider, "fix.v1.get_record", `{"id": "r1"}`, tp)
		},
		"a missing tool over MCP": func(tp string) *answer {
			return s.mcpTracedCall(outsider, "fix.v1.get_records", `{"id": "r1"}`, tp)
		},
	}
	// Every call below finds the token in the cache, at the gate and in
	// the chain alike.
	calls["a missing route"](newCallerTrace(0x2f).header())
	trees := map[string]string{}
	for name, call := range calls {
		caller := newCallerTrace(byte(len(trees)) + 0x30)
		call(caller.header())
		spans := tr.spans(t, caller.traceID, 2)
		root(t, spans, caller)
		trees[name] = renderTree(spans, trace.SpanID{})
	}
	for _, pair := range [][2]string{{"an invisible tool", "a missing route"}, {"an invisible tool over MCP", "a missing tool over MCP"}} {
		if trees[pair[0]] != trees[pair[1]] {
			t.Errorf("%s:\n%s%s:\n%s", pair[0], trees[pair[0]], pair[1], trees[pair[1]])
		}
	}
	if tree := trees["an invisible tool"]; strings.Contains(tree, "record") || strings.Contains(trees["an invisible tool over MCP"], "record") || !strings.Contains(tree, "error.type=not_found") {
		t.Errorf("the invisible tool's span names it, or not its refusal:\n%s", tree)
	}
}

func TestAListingIsOneServerSpanOnEitherSurface(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startStack(t, withTracing(tr), withMCPOn())
	token := s.token("public")
	httpTrace, mcpTrace := newCallerTrace(0x60), newCallerTrace(0x61)
	if ans := s.post("/garm.v1.ToolCatalogService/ListTools", token, `{}`, "Traceparent", httpTrace.header()); ans.status != http.StatusOK {
		t.Fatalf("ListTools: %d %s", ans.status, ans.body)
	}
	if ans := s.post("/mcp", token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", "application/json, text/event-stream",
		"Mcp-Protocol-Version", "2025-11-25", "Traceparent", mcpTrace.header()); ans.status != http.StatusOK {
		t.Fatalf("tools/list: %d %s", ans.status, ans.body)
	}
	for _, tc := range []struct {
		caller callerTrace
		want   string
	}{
		{httpTrace, `
		list_tools server garm.catalogue.digest=* garm.outcome=ok garm.surface=http garm.version=*
		  authenticate internal garm.authn.token_cache_hit=false
		`},
		{mcpTrace, `
		tools/list server garm.catalogue.digest=* garm.outcome=ok garm.surface=mcp garm.version=* mcp.method.name=tools/list mcp.protocol.version=2025-11-25
		  authenticate internal garm.authn.token_cache_hit=true
		`},
	} {
		spans := tr.spans(t, tc.caller.traceID, 2)
		root(t, spans, tc.caller)
		if got := renderTree(spans, trace.SpanID{}); got != trim(tc.want) {
			t.Errorf("trace:\n%s\nwant:\n%s", got, trim(tc.want))
		}
	}
}
