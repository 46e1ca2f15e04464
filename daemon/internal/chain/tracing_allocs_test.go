//go:build !race

// Under the race detector sync.Pool drops pooled values on purpose, so
// these counts are pinned only without it (make test's non-race step).

package chain_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/garm-dev/garm/daemon/internal/tracing"
	"github.com/garm-dev/garm/daemon/internal/transport"
)

// allocsPerAdd is what one call of calc.v1.add allocates through r's chain.
func allocsPerAdd(t *testing.T, r *rig) float64 {
	t.Helper()
	answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
	req := r.request(r.token(t), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
	ctx := context.Background()
	return testing.AllocsPerRun(200, func() {
		if resp := r.chain.Run(ctx, req); resp.Status != 200 {
			t.Fatalf("%d %s", resp.Status, resp.Body)
		}
	})
}

// A call that is not sampled costs at most 4 allocations more than
// tracing off, in either shape of a call's trace (issue 37 §2); a sampled
// call in the default shape costs fewer than with a span per step.
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
