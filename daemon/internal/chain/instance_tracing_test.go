package chain_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/garm-dev/garm/daemon/internal/chain/instance/instancetest"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// traced records the rig's spans from now on, a span per step.
func (r *bankRig) traced(tb testing.TB) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tb.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	r.chain.Tracer = tracing.New(tp, "test", tracing.WithStepSpans())
	return rec
}

// steps are the names of the ended step spans, each with its error.type
// when it has one ("instance_require error.type=permission_denied"), and
// forgets them.
func steps(rec *tracetest.SpanRecorder) []string {
	var names []string
	for _, s := range rec.Ended() {
		if s.Parent().IsValid() {
			name := s.Name()
			for _, kv := range s.Attributes() {
				if kv.Key == attribute.Key("error.type") {
					name += " error.type=" + kv.Value.AsString()
				}
			}
			names = append(names, name)
		}
	}
	rec.Reset()
	return names
}

func TestTheInstanceStepsHaveSpansOnlyForToolsWithRules(t *testing.T) {
	r := newBankRig(t)
	rec := r.traced(t)
	r.answers(t, instancetest.GetCustomer, `{"customerId":"C-1001","name":"Alice"}`)
	if resp := r.call(t, alice, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"acme"}`); resp.Status != 200 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if got := steps(rec); !slices.Contains(got, tracing.StepInstanceRequire) || slices.Contains(got, tracing.StepInstanceAnswer) {
		t.Errorf("a call of a tool with require rules only has steps %q", got)
	}

	// A refusal ends the tree at step 4, which carries the wire code.
	if resp := r.call(t, alice, instancetest.GetCustomer, `{"customerId":"C-1002","tenant":"acme"}`); resp.Status != 403 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	got := steps(rec)
	if got[len(got)-1] != tracing.StepInstanceRequire+" error.type=permission_denied" {
		t.Errorf("a refused call has steps %q", got)
	}

	// Step 7 for reveal rules: the withheld answer is refused there.
	r.answers(t, instancetest.GetPayment, `{"paymentId":"P-7","accountId":"A-9","amount":"5"}`)
	if resp := r.call(t, alice, instancetest.GetPayment, `{"paymentId":"P-7"}`); resp.Status != 404 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	got = steps(rec)
	if last := got[len(got)-1]; last != tracing.StepInstanceAnswer+" error.type=tool_refused" || slices.Contains(got, tracing.StepInstanceRequire) {
		t.Errorf("a withheld answer has steps %q", got)
	}

	// A tool without rules pays nothing: no instance span.
	bare := newBankRigWith(t, map[string]*toolv1.InstancePolicy{}, nil)
	rec = bare.traced(t)
	bare.answers(t, instancetest.GetCustomer, `{"customerId":"C-1001","name":"Alice"}`)
	if resp := bare.call(t, alice, instancetest.GetCustomer, `{"customerId":"C-1001","tenant":"acme"}`); resp.Status != 200 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if got := steps(rec); slices.Contains(got, tracing.StepInstanceRequire) || slices.Contains(got, tracing.StepInstanceAnswer) || !slices.Contains(got, tracing.StepRedact) {
		t.Errorf("a tool without rules has steps %q", got)
	}
}
