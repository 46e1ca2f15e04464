package garmd_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// trim drops the indentation a raw string picks up in a table, keeping
// the tree's own.
func trim(tree string) string {
	lines := strings.Split(strings.TrimRight(strings.TrimLeft(tree, "\n"), "\n\t"), "\n")
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], "\t"))
	for i, l := range lines {
		lines[i] = l[min(indent, len(l)-len(strings.TrimLeft(l, "\t"))):]
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestACallIsOneTraceFromTheCallerThroughGarmdIntoTheTool(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startStack(t, withTracing(tr), withToolTimeout(2*time.Second))
	for i, tc := range []struct {
		name    string
		path    string
		persona string
		body    string
		header  []string
		status  int
		spans   int
		tree    string
	}{
		{
			name: "a success", path: addPath, persona: "public", body: `{"a": 40, "b": 2}`, status: http.StatusOK, spans: 6, tree: `
			execute_tool calc.v1.add server garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  request calc.v1.Calculator.Add client messaging.destination.name=calc.v1.Calculator.Add messaging.operation.name=request messaging.operation.type=send messaging.system=nats
			    calc.v1.add server garm.outcome=ok garm.tool.fqn=calc.v1.add messaging.destination.name=calc.v1.Calculator.Add messaging.system=nats
			  redact internal
			`,
		},
		{
			name: "refused at authentication", path: addPath, body: `{"a": 40, "b": 2}`, status: http.StatusUnauthorized, spans: 2, tree: `
			execute_tool server error.type=unauthenticated garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.surface=http garm.version=* gen_ai.operation.name=execute_tool status=error:unauthenticated
			  authenticate internal error.type=unauthenticated garm.authn.token_cache_hit=false status=error:unauthenticated
			`,
		},
		{
			name: "refused at visibility", path: getPath, persona: "outsider", body: `{"id": "r1"}`, status: http.StatusNotFound, spans: 2, tree: `
			execute_tool server error.type=not_found garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.surface=http garm.version=* gen_ai.operation.name=execute_tool status=error:not_found
			  authenticate internal garm.authn.token_cache_hit=false
			`,
		},
		{
			name: "refused at input", path: addPath, persona: "public", body: `{"a": 40, "nope": 2}`, status: http.StatusBadRequest, spans: 3, tree: `
			execute_tool calc.v1.add server error.type=invalid_argument garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=calc.v1.add status=error:invalid_argument
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal error.type=invalid_argument status=error:invalid_argument
			`,
		},
		{
			name: "refused by the tool", path: refusePath, persona: "public", body: `{"code": "409", "message": "the tool's secret words"}`, status: http.StatusConflict, spans: 5, tree: `
			execute_tool fix.v1.refuse server error.type=tool_refused garm.catalogue.digest=* garm.event_id=* garm.outcome=error garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=fix.v1.refuse status=error:tool_refused
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  request fix.v1.Records.Refuse client error.type=tool_refused messaging.destination.name=fix.v1.Records.Refuse messaging.operation.name=request messaging.operation.type=send messaging.system=nats status=error:tool_refused
			    fix.v1.refuse server error.type=409 garm.outcome=refused garm.tool.fqn=fix.v1.refuse garm.tool.refusal_code=409 messaging.destination.name=fix.v1.Records.Refuse messaging.system=nats status=error:409
			`,
		},
		{
			name: "timed out", path: stallPath, persona: "public", body: `{"ms": 3000}`, header: []string{"Garm-Timeout-Ms", "300"}, status: http.StatusGatewayTimeout, spans: 5, tree: `
			execute_tool fix.v1.stall server error.type=deadline_exceeded garm.catalogue.digest=* garm.event_id=* garm.outcome=error garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=fix.v1.stall status=error:deadline_exceeded
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  request fix.v1.Records.Stall client error.type=deadline_exceeded messaging.destination.name=fix.v1.Records.Stall messaging.operation.name=request messaging.operation.type=send messaging.system=nats status=error:deadline_exceeded
			    fix.v1.stall server error.type=500 garm.outcome=error garm.tool.fqn=fix.v1.stall garm.tool.refusal_code=500 messaging.destination.name=fix.v1.Records.Stall messaging.system=nats status=error:500
			`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := newCallerTrace(byte(i))
			token := ""
			if tc.persona != "" {
				token = s.token(tc.persona)
			}
			ans := s.post(tc.path, token, tc.body, append([]string{"Traceparent", caller.header()}, tc.header...)...)
			if ans.status != tc.status {
				t.Fatalf("%d %s", ans.status, ans.body)
			}
			spans := tr.spans(t, caller.traceID, tc.spans)
			root(t, spans, caller)
			got := renderTree(spans, trace.SpanID{})
			if got != trim(tc.tree) {
				t.Errorf("trace:\n%s\nwant:\n%s", got, trim(tc.tree))
			}
		})
	}
}

func TestTheGrantAndAuditStepsHaveSpansOfTheirOwn(t *testing.T) {
	t.Parallel()
	tr := newTraces(t)
	s := startGovernedStack(t, withTracing(tr))
	grant := s.grant("approver", "appr.v1.pay", payer, paymentMaterial, "task-1")
	for i, tc := range []struct {
		name   string
		path   string
		body   string
		header []string
		status int
		spans  int
		tree   string
	}{
		{
			name: "a payment without a grant", path: payPath, body: payment, status: http.StatusForbidden, spans: 4, tree: `
			execute_tool appr.v1.pay server error.type=grant_required garm.catalogue.digest=* garm.event_id=* garm.outcome=denied garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=appr.v1.pay status=error:grant_required
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  verify_grant internal error.type=grant_required status=error:grant_required
			`,
		},
		{
			name: "a payment with one", path: payPath, body: payment, header: []string{"Garm-Grant", grant}, status: http.StatusOK, spans: 9, tree: `
			execute_tool appr.v1.pay server garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=appr.v1.pay
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  verify_grant internal
			  audit_write_ahead internal
			  spend_grant internal
			  request appr.v1.Payments.Pay client messaging.destination.name=appr.v1.Payments.Pay messaging.operation.name=request messaging.operation.type=send messaging.system=nats
			    appr.v1.pay server garm.outcome=ok garm.tool.fqn=appr.v1.pay messaging.destination.name=appr.v1.Payments.Pay messaging.system=nats
			  redact internal
			`,
		},
		{
			name: "an audited export", path: exportPath, body: `{}`, status: http.StatusOK, spans: 7, tree: `
			execute_tool appr.v1.export server garm.catalogue.digest=* garm.event_id=* garm.outcome=ok garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=appr.v1.export
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  audit_write_ahead internal
			  request appr.v1.Payments.Export client messaging.destination.name=appr.v1.Payments.Export messaging.operation.name=request messaging.operation.type=send messaging.system=nats
			    appr.v1.export server garm.outcome=ok garm.tool.fqn=appr.v1.export messaging.destination.name=appr.v1.Payments.Export messaging.system=nats
			  redact internal
			`,
		},
		{
			name: "an audited export while the audit stream is down", path: exportPath, body: `{}`, status: http.StatusServiceUnavailable, spans: 4, tree: `
			execute_tool appr.v1.export server error.type=unavailable garm.catalogue.digest=* garm.event_id=* garm.outcome=error garm.surface=http garm.version=* gen_ai.operation.name=execute_tool gen_ai.tool.name=appr.v1.export status=error:unavailable
			  authenticate internal garm.authn.token_cache_hit=false
			  validate_input internal
			  audit_write_ahead internal error.type=internal status=error:internal
			`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.name, "down") {
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				defer cancel()
				if err := s.jetstream().DeleteStream(ctx, "GARM_AUDIT"); err != nil {
					t.Fatal(err)
				}
			}
			caller := newCallerTrace(byte(0x10 + i))
			ans := s.post(tc.path, s.token("payer"), tc.body, append([]string{"Traceparent", caller.header()}, tc.header...)...)
			if ans.status != tc.status {
				t.Fatalf("%d %s", ans.status, ans.body)
			}
			spans := tr.spans(t, caller.traceID, tc.spans)
			root(t, spans, caller)
			got := renderTree(spans, trace.SpanID{})
			if got != trim(tc.tree) {
				t.Errorf("trace:\n%s\nwant:\n%s", got, trim(tc.tree))
			}
		})
	}
}
