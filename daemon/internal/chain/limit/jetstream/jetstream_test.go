package jetstream_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func connect(t *testing.T) jetstream.JetStream {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Twenty-four writers adding at once to one counter read back totals that
// are each a distinct step: the bus's count is exact.
func TestConcurrentAddsOnOneCounterAreExact(t *testing.T) {
	t.Parallel()
	js := connect(t)
	ctx := context.Background()
	if err := limitjs.Create(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	c := limitjs.New(js)
	const writers, each = 24, 20
	seen := make(chan int64, writers*each)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				n, err := c.Add(ctx, "garm.limits.m.t.id.1.KEY", 1)
				if err != nil {
					t.Error(err)
					return
				}
				seen <- n
			}
		})
	}
	wg.Wait()
	close(seen)
	got := map[int64]bool{}
	for n := range seen {
		if got[n] {
			t.Fatalf("two adds read the same total %d", n)
		}
		got[n] = true
	}
	if len(got) != writers*each || !got[writers*each] {
		t.Fatalf("%d distinct totals, want %d up to %d", len(got), writers*each, writers*each)
	}
	if n, err := c.Add(ctx, "garm.limits.m.t.id.1.KEY", -5); err != nil || n != writers*each-5 {
		t.Fatalf("a give-back read %d, %v", n, err)
	}
}

// The bus's clock is read from what it stored, not from the replica.
func TestTheClockIsTheBuses(t *testing.T) {
	t.Parallel()
	js := connect(t)
	ctx := context.Background()
	if err := limitjs.Create(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
	bus, err := limitjs.New(js).Time(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(bus); d < -time.Second || d > time.Second {
		t.Fatalf("the embedded bus's clock is %s off this process's", d)
	}
}

// A counter stream that lets a client purge it, or that keeps counters for
// ever, is refused: a purge would admit a window twice, and a counter that
// never expires is memory a caller fills.
func TestAnUnfencedOrUnexpiringCounterStreamIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		shape func(*jetstream.StreamConfig)
		want  string
	}{
		{"purgeable", func(c *jetstream.StreamConfig) { c.DenyPurge = false }, "not fenced"},
		{"for ever", func(c *jetstream.StreamConfig) { c.MaxAge = 0 }, "expire"},
		{"no counters", func(c *jetstream.StreamConfig) { c.AllowMsgCounter = false }, "counters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			js := connect(t)
			for i, s := range limit.Streams() {
				cfg := limitjs.StreamConfig(s, 1)
				if i == 1 {
					c.shape(&cfg)
				}
				if _, err := js.CreateStream(ctx, cfg); err != nil {
					t.Fatal(err)
				}
			}
			if err := limitjs.Check(ctx, js); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("checked: %v", err)
			}
		})
	}
	js := connect(t)
	if err := limitjs.Create(ctx, js, 1); err != nil {
		t.Fatalf("a stream created by Create fails its check: %v", err)
	}
}
