package chain_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/ledger"
	"github.com/garm-dev/garm/daemon/internal/transport"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// BenchmarkChainInProcess is design 9's chain overhead: a small call through
// every step with a cached principal and plan, and no network (the
// transport answers at once).
func BenchmarkChainInProcess(b *testing.B) {
	benchmarkAdd(b, newRigRecording(b, discard{}), "")
}

// benchmarkAdd measures r's chain running calc.v1.add, sent with
// traceparent, with a transport that answers at once.
func benchmarkAdd(b *testing.B, r *rig, traceparent string) {
	answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
	req := r.request(r.token(b), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
	req.Traceparent = traceparent
	ctx := context.Background()
	if resp := r.chain.Run(ctx, req); resp.Status != 200 {
		b.Fatalf("%d %s", resp.Status, resp.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if resp := r.chain.Run(ctx, req); resp.Status != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// discard drops rows, so the benchmark measures the chain, not a growing
// slice of rows.
type discard struct{}

func (discard) Record(*ledgerv1.Event)      {}
func (discard) Close(context.Context) error { return nil }
func (discard) Counts() *ledger.Counts      { return nil }

// BenchmarkChainInProcessLimited is BenchmarkChainInProcess with calc.v1.add
// under a rate limit counted on a real JetStream server on loopback: the
// limit step's cost on one node, uncontended. p50-µs is the median call.
func BenchmarkChainInProcessLimited(b *testing.B) {
	r := newGovernedRig(b)
	r.chain.Recorder = discard{}
	limitGoverned(b, r, limitRate("calc.v1.add", "adds", 1<<31, toolv1.Limit_KEY_PART_SUBJECT))
	answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
	req := r.request(r.token(b), "/calc.v1.Calculator/Add", `{"a":1,"b":2}`)
	ctx := context.Background()
	var took []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if resp := r.chain.Run(ctx, req); resp.Status != 200 {
			b.Fatalf("%d %s", resp.Status, resp.Body)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
}
