//go:build !race

// Under the race detector sync.Pool drops pooled values on purpose, so
// these counts are pinned only without it (make test's non-race step).

package chain_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/metrics"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	"github.com/garm-dev/garm/daemon/internal/transport"
)

// surfaceContext is a context as a surface hands the chain one: its
// request's, with values, detached from its cancellation (Detach).
func surfaceContext() context.Context {
	type requestKey struct{}
	return chain.Detach(context.WithValue(context.Background(), requestKey{}, "a request"))
}

// allocsPerAdd is what one call of calc.v1.add allocates through r's chain,
// under a surface's context.
func allocsPerAdd(t *testing.T, r *rig) float64 {
	t.Helper()
	answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
	req := r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
	ctx := surfaceContext()
	return testing.AllocsPerRun(200, func() {
		if resp := r.chain.Run(ctx, req); resp.Status != 200 {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
	})
}

// A call that is not sampled costs at most 4 allocations more than
// tracing off under a surface's context, in either shape of a call's trace:
// the SDK's unsampled span and its context, the context node that carries
// the call (and holds it), and the traceparent the tool receives
// (docs/decisions/0147; it was 8 when a lookup through the surface's
// context.WithoutCancel boxed it, and 5 when the call lived in the chain's
// state and so made it escape). A sampled call in the default shape costs
// fewer than with a span per step.
func TestAnUnsampledCallAddsAtMostFourAllocations(t *testing.T) {
	traced := func(sampler sdktrace.Sampler, shape ...tracing.Option) float64 {
		r := newRigRecording(t, discard{})
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(tracing.NewBatcher(dropSpans{}, tracing.BatchLimits{})))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		r.chain.Tracer = tracing.New(tp, "test", shape...)
		return allocsPerAdd(t, r)
	}
	off := allocsPerAdd(t, newRigRecording(t, discard{}))
	for name, n := range map[string]float64{
		"default shape":   traced(sdktrace.NeverSample()),
		"a span per step": traced(sdktrace.NeverSample(), tracing.WithStepSpans()),
	} {
		if n > off+4 {
			t.Errorf("%s: an unsampled call allocates %v, tracing off %v: more than 4 more", name, n, off)
		}
	}
	sampled, steps := traced(sdktrace.AlwaysSample()), traced(sdktrace.AlwaysSample(), tracing.WithStepSpans())
	if sampled >= steps {
		t.Errorf("a sampled call allocates %v in the default shape, %v with a span per step", sampled, steps)
	}
	t.Logf("allocations per call: off %v; sampled %v, with step spans %v", off, sampled, steps)
}

// With tracing off, a call observed for metrics, as garmd observes it (a
// latency exemplar when the call's span is sampled), allocates what it
// allocates unobserved, under the context a surface gives the chain: its
// request's, without its cancellation. No span is looked for where none
// can be.
func TestTracingOffTheMetricsLookForNoSpan(t *testing.T) {
	count := func(observe bool) float64 {
		r := newRigRecording(t, discard{})
		if observe {
			r.chain.Observe = metrics.New("test", metrics.Sources{}).ObserveCallContext
		}
		answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
		r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
		req := r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
		ctx := surfaceContext()
		r.chain.Run(ctx, req) // the series, resolved once
		return testing.AllocsPerRun(200, func() {
			if resp := r.chain.Run(ctx, req); resp.Status != 200 {
				t.Fatalf("%d %s", resp.Status, resp.Body)
			}
		})
	}
	if observed, unobserved := count(true), count(false); observed != unobserved {
		t.Fatalf("an observed call allocates %v, an unobserved one %v", observed, unobserved)
	}
}
