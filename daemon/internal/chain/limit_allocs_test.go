//go:build !race

// Under the race detector sync.Pool drops pooled values on purpose, so this
// count is pinned only without it (make test's non-race step).

package chain_test

import (
	"context"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/transport"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// A tool with no limit pays nothing for the limit step: with limits on and
// another tool limited, a call of it allocates exactly what it does with
// no limit anywhere, and makes no round trip to the bus (the limiter's
// counter is on a bus this test stops first).
func TestAToolWithNoLimitAddsNoAllocationToTheChain(t *testing.T) {
	count := func(r *rig) float64 {
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
	off := count(newGovernedRig(t))
	limited := newGovernedRig(t)
	js := limitGoverned(t, limited, limitRate("calc.v1.divide", "divides", 10, toolv1.Limit_KEY_PART_SUBJECT))
	limited.chain.Limits = unreachableLimiter(t, js)
	if on := count(limited); on != off {
		t.Fatalf("an unlimited tool allocates %v with limits on, %v without", on, off)
	}
}
