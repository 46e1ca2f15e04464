package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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

// replicas are three limiters, each connected first to its own node of a
// three-node cluster whose counter streams keep three copies: what three
// garmd replicas count with.
func replicas(tb testing.TB) (*garmtooltest.Cluster, []*limit.Limiter) {
	tb.Helper()
	c := garmtooltest.StartCluster(tb, "limits", 3)
	var out []*limit.Limiter
	for i, node := range c.Nodes {
		// Each replica knows every node, its own first, and reconnects.
		seeds := node.URL()
		for j, other := range c.Nodes {
			if j != i {
				seeds += "," + other.URL()
			}
		}
		nc, err := nats.Connect(seeds, nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := limitjs.Create(ctx, js, 3)
			cancel()
			if err != nil {
				tb.Fatal(err)
			}
		}
		out = append(out, limit.New(limit.Config{Counter: limitjs.New(js), Bound: 2 * time.Second}))
	}
	return c, out
}

// race runs clients concurrent clients, spread over the replicas, each
// calling until the limit refuses it three times or the run's bound ends;
// a call the bus could not count is retried. during, when set, runs once
// after the first admissions.
func race(tb testing.TB, limiters []*limit.Limiter, lims []*limit.Limit, clients int, during func()) (admitted, limited, unavailable int64) {
	var a, l, u atomic.Int64
	var once sync.Once
	deadline := time.Now().Add(40 * time.Second)
	var wg sync.WaitGroup
	for i := range clients {
		lim := limiters[i%len(limiters)]
		wg.Go(func() {
			for misses := 0; misses < 3 && time.Now().Before(deadline); {
				var tk limit.Ticket
				_, err := lim.Admit(context.Background(), lims, alice, &tk)
				var d *deny.Denied
				switch {
				case err == nil:
					if n := a.Add(1); n == 50 && during != nil {
						once.Do(func() { go during() })
					}
				case errors.As(err, &d) && d.Code == deny.RateLimited:
					l.Add(1)
					misses++
				default:
					u.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return a.Load(), l.Load(), u.Load()
}

// On a three-node cluster, 24 clients on one hot key through three
// replicas are admitted exactly the limit, in repeated runs; and while a
// node is killed mid-run, never more (a call that cannot be counted is
// refused), with the refusals counted.
func TestThreeReplicasOnAClusterAdmitExactlyTheLimitEvenWhileANodeDies(t *testing.T) {
	c, limiters := replicas(t)
	const limitOf = 600
	for run := range 2 {
		lims := compiled(t, rate(fmt.Sprintf("hot_%d", run), limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT))
		if got, refused, away := race(t, limiters, lims, 24, nil); got != limitOf || away != 0 {
			t.Fatalf("run %d: admitted %d (%d refused, %d not counted), want exactly %d", run, got, refused, away, limitOf)
		}
	}
	// A soft limit, with the bus answering, overshoots by nothing (≤ 2%).
	soft := rate("hot_soft", limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT)
	soft.Soft = true
	if got, _, _ := race(t, limiters, compiled(t, soft), 24, nil); got != limitOf {
		t.Fatalf("a soft limit admitted %d across three replicas, want %d", got, limitOf)
	}
	lims := compiled(t, rate("hot_nodeloss", limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT))
	got, refused, away := race(t, limiters, lims, 24, func() { c.Nodes[1].Stop() })
	t.Logf("with a node killed mid-run: admitted %d, refused %d over the limit, %d the bus could not count", got, refused, away)
	if got > limitOf {
		t.Fatalf("admitted %d with a node killed, over the limit of %d", got, limitOf)
	}
	if refused == 0 {
		t.Fatal("no call was refused over the limit")
	}
}

// BenchmarkHotKeyOnACluster is admissions per second on one hot key, 24
// clients through three replicas of a three-node cluster with R3 streams.
func BenchmarkHotKeyOnACluster(b *testing.B) {
	_, limiters := replicas(b)
	lims := compiled(b, rate("hot", 1<<31, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT))
	var next atomic.Int64
	b.SetParallelism(12)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		l := limiters[next.Add(1)%3]
		for pb.Next() {
			var tk limit.Ticket
			if _, err := l.Admit(context.Background(), lims, alice, &tk); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "admissions/s")
}

// BenchmarkHotKeyOnOneNode is BenchmarkHotKeyOnACluster on one node, R1:
// the replication's share of the cluster's figure.
func BenchmarkHotKeyOnOneNode(b *testing.B) {
	srv := garmtooltest.StartJetStream(b)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	if err := limitjs.Create(context.Background(), js, 1); err != nil {
		b.Fatal(err)
	}
	l := limit.New(limit.Config{Counter: limitjs.New(js), Bound: 2 * time.Second})
	lims := compiled(b, rate("hot", 1<<31, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT))
	b.SetParallelism(12)
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var tk limit.Ticket
			if _, err := l.Admit(context.Background(), lims, alice, &tk); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "admissions/s")
}
