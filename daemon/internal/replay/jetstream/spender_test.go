package jetstream_test

import (
	"context"
	"errors"
	"fmt"
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
	kv := createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-1")

	if spent, err := s.Spent(bounded(t), key); err != nil || spent {
		t.Fatalf("Spent before any Spend = %v, %v", spent, err)
	}
	if err := s.Spend(bounded(t), key, "call-1"); err != nil {
		t.Fatalf("first Spend = %v", err)
	}
	if spent, err := s.Spent(bounded(t), key); err != nil || !spent {
		t.Fatalf("Spent after the Spend = %v, %v", spent, err)
	}
	if err := s.Spend(bounded(t), key, "call-2"); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend by call-2 after call-1 = %v, want replay.ErrSpent", err)
	}
	// The record names call-1: the same call asking again is told its own
	// spend, as it must be when its first answer was lost.
	if err := s.Spend(bounded(t), key, "call-1"); err != nil {
		t.Fatalf("Spend by call-1 again = %v, want its own spend", err)
	}
	if err := s.Spend(bounded(t), replay.Key("https://approvals.example", "g-2"), "call-3"); err != nil {
		t.Fatalf("Spend of another grant = %v", err)
	}

	entry, err := kv.Get(bounded(t), key)
	if err != nil {
		t.Fatal(err)
	}
	if string(entry.Value()) != "call-1" {
		t.Errorf("the spent key's value %q does not name the call that spent it", entry.Value())
	}
	if entry.Revision() != 1 {
		t.Errorf("the key has revision %d: the replay wrote to it", entry.Revision())
	}
}

func TestConcurrentSpendsOfOneGrantSucceedExactlyOnce(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
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
			switch err := spenders[i%len(spenders)].Spend(bounded(t), key, fmt.Sprint("call-", i)); {
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
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-restart")
	if err := s.Spend(bounded(t), key, "call-1"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The connection reconnects by itself; the replay waits for it.
	if err := s.Spend(bounded(t), key, "call-2"); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend after a restart = %v, want replay.ErrSpent", err)
	}
}

func TestASpendThatCannotReachTheBucketFailsButIsNotSpent(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	srv.Stop()

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Spend(ctx, replay.Key("https://approvals.example", "g-down"), "call-1")
	if err == nil || errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend with no server = %v, want an error other than replay.ErrSpent", err)
	}
}

// TestAGrantForgottenWithADeleteOrPurgeMarkerStaysSpent writes the markers
// a KeyValue client writes to delete and to purge a key — what anyone
// allowed to publish on the bucket's subjects could do — and spends the
// grant again: it is still spent. An unfenced bucket takes the marker and
// the create-only spend still refuses; a fenced one refuses the marker.
func TestAGrantForgottenWithADeleteOrPurgeMarkerStaysSpent(t *testing.T) {
	for _, forget := range []struct {
		name string
		do   func(jetstream.KeyValue, string) error
	}{
		{"delete", func(kv jetstream.KeyValue, key string) error { return kv.Delete(bounded(t), key) }},
		{"purge", func(kv jetstream.KeyValue, key string) error { return kv.Purge(bounded(t), key) }},
	} {
		for _, fence := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, fenced %v", forget.name, fence), func(t *testing.T) {
				js := connect(t, garmtooltest.StartJetStream(t))
				kv := createBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
				if fence {
					if err := replayjs.Fence(bounded(t), js, wire.GrantsSpentBucket); err != nil {
						t.Fatal(err)
					}
				}
				s := replayjs.New(js, wire.GrantsSpentBucket)
				key := replay.Key("https://approvals.example", "g-"+forget.name)
				if err := s.Spend(bounded(t), key, "call-1"); err != nil {
					t.Fatal(err)
				}
				err := forget.do(kv, key)
				if fence && err == nil {
					t.Errorf("the fenced bucket took a %s marker", forget.name)
				}
				if !fence {
					if err != nil {
						t.Fatal(err)
					}
					if _, err := kv.Get(bounded(t), key); !errors.Is(err, jetstream.ErrKeyDeleted) && !errors.Is(err, jetstream.ErrKeyNotFound) {
						t.Fatalf("after the %s marker the key reads %v, want it deleted", forget.name, err)
					}
				}
				if err := s.Spend(bounded(t), key, "call-2"); !errors.Is(err, replay.ErrSpent) {
					t.Fatalf("Spend after a %s marker = %v, want replay.ErrSpent", forget.name, err)
				}
			})
		}
	}
}

func TestAFencedBucketRefusesToForgetASpentGrantWholesale(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-wholesale")
	if err := s.Spend(bounded(t), key, "call-1"); err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(bounded(t), "KV_"+wire.GrantsSpentBucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(bounded(t)); err == nil {
		t.Error("the fenced bucket's stream was purged")
	}
	if err := stream.DeleteMsg(bounded(t), 1); err == nil {
		t.Error("the fenced bucket's record was deleted")
	}
	if _, err := js.Publish(bounded(t), "$KV."+wire.GrantsSpentBucket+"."+key, []byte("call-2")); err == nil {
		t.Error("the fenced bucket took a second write to a spent key")
	}
	if err := s.Spend(bounded(t), key, "call-2"); !errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend after the attempts = %v, want replay.ErrSpent", err)
	}
}
