package garmd_test

import (
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// By default (no --trace-steps) a call has two spans of garmd's: the
// server span, which carries each step's time as
// garm.step.<step>.duration_ns and the token cache's answer, and the NATS
// client span, whose context the tool receives, so the tool's span is
// still garmd's grandchild in the caller's trace (docs/decisions/0143).
func TestByDefaultACallHasTheServerSpanAndTheNATSClientSpanWithItsStepsTimed(t *testing.T) {
	tr := newTraces(t)
	s := startStack(t, withDefaultTracing(tr), withMCPOn())
	for i, tc := range []struct {
		name    string
		path    string
		persona string
		body    string
		status  int
		spans   int
		tree    string
	}{
		{
			name: "a success", path: addPath, persona: "public", body: `{"a": 40, "b": 2}`, status: http.StatusOK, spans: 3, tree: `
			execute_tool calc.v1.add server garm.authn.token_cache_hit=false garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.step.authenticate.duration_ns=* garm.step.redact.duration_ns=* garm.step.validate_input.duration_ns=* garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add
			  request calc.v1.Calculator.Add client messaging.destination.name=calc.v1.Calculator.Add messaging.operation.name=request messaging.operation.type=send messaging.system=nats
			    calc.v1.add server garm.outcome=ok garm.tool.fqn=calc.v1.add messaging.destination.name=calc.v1.Calculator.Add messaging.system=nats
			`,
		},
		{
			name: "refused at authentication", path: addPath, body: `{"a": 40, "b": 2}`, status: http.StatusUnauthorized, spans: 1, tree: `
			execute_tool server error.type=unauthenticated garm.authn.token_cache_hit=false garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.step.authenticate.duration_ns=* garm.surface=http garm.version=* gen_ai.operation.name=execute_tool status=error:unauthenticated
			`,
		},
		{
			name: "refused at input", path: addPath, persona: "public", body: `{"a": 40, "nope": 2}`, status: http.StatusBadRequest, spans: 1, tree: `
			execute_tool calc.v1.add server error.type=invalid_argument garm.authn.token_cache_hit=false garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.step.authenticate.duration_ns=* garm.step.validate_input.duration_ns=* garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add status=error:invalid_argument
			`,
		},
		{
			name: "refused by the tool", path: refusePath, persona: "public", body: `{"code": "409", "message": "the tool's secret words"}`, status: http.StatusConflict, spans: 3, tree: `
			execute_tool fix.v1.refuse server error.type=tool_refused garm.authn.token_cache_hit=false garm.catalogue.digest=* garm.event_id=* garm.outcome=error garm.step.authenticate.duration_ns=* garm.step.validate_input.duration_ns=* garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=fix.v1.refuse status=error:tool_refused
			  request fix.v1.Records.Refuse client error.type=tool_refused messaging.destination.name=fix.v1.Records.Refuse messaging.operation.name=request messaging.operation.type=send messaging.system=nats status=error:tool_refused
			    fix.v1.refuse server error.type=409 garm.outcome=refused garm.tool.fqn=fix.v1.refuse garm.tool.refusal_code=409 messaging.destination.name=fix.v1.Records.Refuse messaging.system=nats status=error:409
			`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := newCallerTrace(0x40 + byte(i))
			token := ""
			if tc.persona != "" {
				token = s.token(tc.persona)
			}
			ans := s.post(tc.path, token, tc.body, "Traceparent", caller.header())
			if ans.status != tc.status {
				t.Fatalf("%d %s", ans.status, ans.body)
			}
			spans := tr.spans(t, caller.traceID, tc.spans)
			root(t, spans, caller)
			if got := renderTree(spans, trace.SpanID{}); got != trim(tc.tree) {
				t.Errorf("trace:\n%s\nwant:\n%s", got, trim(tc.tree))
			}
		})
	}

	t.Run("over MCP", func(t *testing.T) {
		caller := newCallerTrace(0x4f)
		ans := s.mcpTracedCall(s.token("public"), "calc.v1.add", `{"a": 40, "b": 2}`, caller.header())
		if ans.status != http.StatusOK || !strings.Contains(string(ans.body), `"result"`) {
			t.Fatalf("%d %s", ans.status, ans.body)
		}
		spans := tr.spans(t, caller.traceID, 3)
		root(t, spans, caller)
		want := trim(`
		tools/call calc.v1.add server garm.authn.token_cache_hit=false garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.step.authenticate.duration_ns=* garm.step.redact.duration_ns=* garm.step.validate_input.duration_ns=* garm.surface=mcp garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add mcp.method.name=tools/call mcp.protocol.version=2025-11-25
		  request calc.v1.Calculator.Add client messaging.destination.name=calc.v1.Calculator.Add messaging.operation.name=request messaging.operation.type=send messaging.system=nats
		    calc.v1.add server garm.outcome=ok garm.tool.fqn=calc.v1.add messaging.destination.name=calc.v1.Calculator.Add messaging.system=nats
		`)
		if got := renderTree(spans, trace.SpanID{}); got != want {
			t.Errorf("trace:\n%s\nwant:\n%s", got, want)
		}
	})
}
