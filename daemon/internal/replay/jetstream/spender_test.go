package jetstream_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/replay"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

func TestAGrantIsSpentOnceAndItsReplayIsSpent(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	kv := createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-1")

	before := time.Now().UTC().Truncate(time.Second)
	if err := s.Spend(bounded(t), key); err != nil {
		t.Fatalf("first Spend = %v", err)
	}
	if err := s.Spend(bounded(t), key); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("second Spend = %v, want replay.ErrSpent", err)
	}
	if err := s.Spend(bounded(t), replay.Key("https://approvals.example", "g-2")); err != nil {
		t.Fatalf("Spend of another grant = %v", err)
	}

	entry, err := kv.Get(bounded(t), key)
	if err != nil {
		t.Fatal(err)
	}
	spentAt, err := time.Parse(time.RFC3339, string(entry.Value()))
	if err != nil {
		t.Fatalf("the spent key's value %q is not an RFC 3339 time: %v", entry.Value(), err)
	}
	if spentAt.Before(before) || spentAt.After(time.Now().Add(time.Second)) {
		t.Errorf("the key says it was spent at %v, not during the test (from %v)", spentAt, before)
	}
	if entry.Revision() != 1 {
		t.Errorf("the key has revision %d: the replay wrote to it", entry.Revision())
	}
}

func TestConcurrentSpendsOfOneGrantSucceedExactlyOnce(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	// Several connections, as several replicas would have.
	var spenders []*replayjs.Spender
	for range 4 {
		spenders = append(spenders, replayjs.New(connect(t, srv), wire.GrantsSpentBucket))
	}
	key := replay.Key("https://approvals.example", "g-race")
	var ok, spent atomic.Int32
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			switch err := spenders[i%len(spenders)].Spend(bounded(t), key); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, replay.ErrSpent):
				spent.Add(1)
			default:
				t.Errorf("Spend = %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || spent.Load() != 99 {
		t.Errorf("%d spends succeeded and %d were refused as spent, want 1 and 99", ok.Load(), spent.Load())
	}
}

func TestASpentGrantIsStillSpentAfterTheServerRestarts(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-restart")
	if err := s.Spend(bounded(t), key); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The connection reconnects by itself; the replay waits for it.
	if err := s.Spend(bounded(t), key); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend after a restart = %v, want replay.ErrSpent", err)
	}
}

func TestASpendThatCannotReachTheBucketFailsButIsNotSpent(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	srv.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Spend(ctx, replay.Key("https://approvals.example", "g-down"))
	if err == nil || errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend with no server = %v, want an error other than replay.ErrSpent", err)
	}
}

// TestAGrantForgottenWithADeleteOrPurgeMarkerStaysSpent writes the markers
// a KeyValue client writes to delete and to purge a key — what anyone
// allowed to publish on the bucket's subjects could do — and spends the
// grant again: it is still spent.
func TestAGrantForgottenWithADeleteOrPurgeMarkerStaysSpent(t *testing.T) {
	for _, forget := range []struct {
		name string
		do   func(jetstream.KeyValue, string) error
	}{
		{"delete", func(kv jetstream.KeyValue, key string) error { return kv.Delete(bounded(t), key) }},
		{"purge", func(kv jetstream.KeyValue, key string) error { return kv.Purge(bounded(t), key) }},
	} {
		t.Run(forget.name, func(t *testing.T) {
			js := connect(t, garmtooltest.StartJetStream(t))
			kv := createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
			s := replayjs.New(js, wire.GrantsSpentBucket)
			key := replay.Key("https://approvals.example", "g-"+forget.name)
			if err := s.Spend(bounded(t), key); err != nil {
				t.Fatal(err)
			}
			if err := forget.do(kv, key); err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(bounded(t), key); !errors.Is(err, jetstream.ErrKeyDeleted) && !errors.Is(err, jetstream.ErrKeyNotFound) {
				t.Fatalf("after the %s marker the key reads %v, want it deleted", forget.name, err)
			}
			if err := s.Spend(bounded(t), key); !errors.Is(err, replay.ErrSpent) {
				t.Fatalf("Spend after a %s marker = %v, want replay.ErrSpent", forget.name, err)
			}
		})
	}
}
