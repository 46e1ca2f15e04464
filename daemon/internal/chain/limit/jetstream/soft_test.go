package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A soft limit's local bucket starts from what the bus last said: three
// replicas that counted 21 of a limit of 30 on the bus, which then goes
// away, admit between them at most the 9 that remained, never the limit
// again (docs/decisions/0128).
func TestASoftLimitWhoseBusWentAwayAdmitsOnlyWhatTheBusLastSaidRemained(t *testing.T) {
	t.Parallel()
	srv := garmtooltest.StartJetStream(t)
	const replicas, limitOf, counted = 3, 30, 21
	var limiters []*limit.Limiter
	for i := range replicas {
		nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := limitjs.Create(context.Background(), js, 1); err != nil {
				t.Fatal(err)
			}
		}
		l := limit.New(limit.Config{Counter: limitjs.New(js), Bound: 50 * time.Millisecond, Replicas: replicas})
		if err := l.Calibrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	soft := rate("soft_day", limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT)
	soft.Soft = true
	lims := compiled(t, soft)
	ctx := context.Background()
	// The calls are spread over the replicas, each seeing its own totals.
	for i := range counted {
		var tk limit.Ticket
		if _, err := limiters[i%replicas].Admit(ctx, lims, alice, &tk); err != nil {
			t.Fatalf("call %d with the bus up: %v", i+1, err)
		}
	}
	srv.Stop()
	away := 0
	for _, l := range limiters {
		mine := 0
		// More than the share of the whole limit, count/replicas.
		for range limitOf/replicas + 1 {
			var tk limit.Ticket
			_, err := l.Admit(ctx, lims, alice, &tk)
			var d *deny.Denied
			switch {
			case err == nil:
				mine++
			case !errors.As(err, &d) || d.Code != deny.RateLimited:
				t.Fatalf("a soft limit with the bus away answered %v, want an admission or rate_limited", err)
			}
		}
		t.Logf("a replica admitted %d with the bus away", mine)
		away += mine
	}
	t.Logf("%d counted on the bus, then %d admitted across %d replicas with it away: %d of a limit of %d", counted, away, replicas, counted+away, limitOf)
	if counted+away > limitOf {
		t.Fatalf("%d counted on the bus and %d more admitted with it away: over the limit of %d", counted, away, limitOf)
	}
	if away == 0 {
		t.Fatal("nothing was admitted with the bus away: a soft limit prefers availability")
	}
}
