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

func inFlight(id string, n uint32) *toolv1.Limit {
	return &toolv1.Limit{Id: id, Description: "a bound", Key: []toolv1.Limit_KeyPart{toolv1.Limit_KEY_PART_TOOL},
		Kind: &toolv1.Limit_Concurrency_{Concurrency: &toolv1.Limit_Concurrency{InFlight: n}}}
}

// A concurrency bound admits as many calls as it bounds while they are in
// flight, and one more once a call ends.
func TestAConcurrencyBoundCountsCallsInFlightAndGivesThemBack(t *testing.T) {
	t.Parallel()
	js := streams(t)
	lims := compiled(t, inFlight("two_at_a_time", 2))
	l := limit.New(limit.Config{Counter: limitjs.New(js)})
	ctx := context.Background()
	var a, b, c limit.Ticket
	if _, err := l.Admit(ctx, lims, alice, &a); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit(ctx, lims, alice, &b); err != nil {
		t.Fatal(err)
	}
	var d *deny.Denied
	if _, err := l.Admit(ctx, lims, alice, &c); !errors.As(err, &d) || d.Code != deny.RateLimited || c.Counted() {
		t.Fatalf("a third in flight: %v, counted %v", err, c.Counted())
	}
	// A call that ran and ended gives its place back.
	l.Release(ctx, &a, true)
	if _, err := l.Admit(ctx, lims, alice, &c); err != nil {
		t.Fatalf("after one ended: %v", err)
	}
}

// A hard limit whose counter does not answer refuses the call
// limit_unavailable within its bound; a soft one admits on the replica's
// share of the limit, and no more.
func TestAnUnreachableCounterRefusesAHardLimitAndASoftOneAdmitsItsShare(t *testing.T) {
	t.Parallel()
	srv := garmtooltest.StartJetStream(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	if err := limitjs.Create(context.Background(), js, 1); err != nil {
		t.Fatal(err)
	}
	bound := 100 * time.Millisecond
	hard := compiled(t, rate("hard", 100, toolv1.Limit_WINDOW_MINUTE, toolv1.Limit_KEY_PART_SUBJECT))
	softLimit := rate("soft", 30, toolv1.Limit_WINDOW_MINUTE, toolv1.Limit_KEY_PART_SUBJECT)
	softLimit.Soft = true
	soft := compiled(t, softLimit)
	l := limit.New(limit.Config{Counter: limitjs.New(js), Bound: bound, Replicas: 3})
	ctx := context.Background()
	if err := l.Calibrate(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	var tk limit.Ticket
	start := time.Now()
	_, err = l.Admit(ctx, hard, alice, &tk)
	var f *deny.Failed
	if !errors.As(err, &f) || f.Kind != deny.KindLimitUnavailable || time.Since(start) > 10*bound {
		t.Fatalf("a hard limit with the bus away: %v after %s", err, time.Since(start))
	}
	admitted := 0
	for range 20 {
		var tk limit.Ticket
		if _, err := l.Admit(ctx, soft, alice, &tk); err == nil {
			admitted++
		}
	}
	if admitted != 10 {
		t.Fatalf("a soft limit of 30 on 3 replicas admitted %d with the bus away, want its share of 10", admitted)
	}
}
