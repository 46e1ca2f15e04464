package versions_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func bus(t *testing.T) jetstream.JetStream {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	return js
}

// raiseTo is a Decide that raises the record to v and never lowers it.
func raiseTo(v uint64) versions.Decide {
	return func(current versions.Record, found bool) (versions.Record, bool, error) {
		if found && current.Version >= v {
			return current, false, nil
		}
		return versions.Record{Version: v, Digest: "sha256:x"}, true, nil
	}
}

func TestReplicasRacingToRaiseTheVersionLeaveTheHighest(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	store, err := versions.Ensure(ctx, bus(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for v := uint64(1); v <= 40; v++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := store.Advance(ctx, "bank", raiseTo(v)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rec, _, found, err := store.Highest(ctx, "bank")
	if err != nil || !found || rec.Version != 40 || rec.Name != "bank" {
		t.Fatalf("after the race: %+v found=%v err=%v, want version 40", rec, found, err)
	}
}

func TestAStaleWriteDoesNotLowerTheRecord(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	store, err := versions.Ensure(ctx, bus(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Advance(ctx, "bank", raiseTo(3)); err != nil {
		t.Fatal(err)
	}
	// A decision taken on version 3, overtaken by a write of 9 before it
	// is applied, is decided again on 9.
	calls := 0
	_, err = store.Advance(ctx, "bank", func(current versions.Record, found bool) (versions.Record, bool, error) {
		calls++
		if calls == 1 {
			if _, err := store.Advance(ctx, "bank", raiseTo(9)); err != nil {
				t.Fatal(err)
			}
		}
		if current.Version >= 5 {
			return current, false, nil
		}
		return versions.Record{Version: 5}, true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rec, _, _, _ := store.Highest(ctx, "bank")
	if rec.Version != 9 || calls != 2 {
		t.Fatalf("record %d after %d decisions, want 9 after 2", rec.Version, calls)
	}
}

func TestAnUnfencedBucketIsRefusedNamingTheFix(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	js := bus(t)
	if _, err := js.CreateKeyValue(ctx, versions.BucketConfig(1)); err != nil {
		t.Fatal(err)
	}
	_, err := versions.Open(ctx, js)
	if err == nil || !strings.Contains(err.Error(), versions.FenceCommand()) || !strings.Contains(err.Error(), "allows purging") {
		t.Fatalf("Open on an unfenced bucket: %v", err)
	}
	if err := versions.Fence(ctx, js); err != nil {
		t.Fatal(err)
	}
	if _, err := versions.Open(ctx, js); err != nil {
		t.Fatalf("Open after the fence: %v", err)
	}
}

func TestAMissingBucketIsRefusedNamingHowToCreateIt(t *testing.T) {
	t.Parallel()
	_, err := versions.Open(bounded(t), bus(t))
	if err == nil || !strings.Contains(err.Error(), "garm bus init") {
		t.Fatalf("Open without a bucket: %v", err)
	}
}

func TestTheFencedBucketRefusesAPurge(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	js := bus(t)
	store, err := versions.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Advance(ctx, "bank", raiseTo(4)); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, "KV_"+versions.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx); err == nil {
		t.Fatal("the fenced bucket took a purge")
	}
	if rec, _, _, _ := store.Highest(ctx, "bank"); rec.Version != 4 {
		t.Fatalf("record %d after a refused purge, want 4", rec.Version)
	}
}

func TestADeletedRecordIsNotReadAsNeverServed(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	js := bus(t)
	store, err := versions.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Advance(ctx, "bank", raiseTo(4)); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, versions.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	// A delete marker is a write, which the fence cannot refuse to an
	// identity allowed to write the bucket.
	if err := kv.Delete(ctx, versions.Key("bank")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := store.Highest(ctx, "bank"); !errors.Is(err, versions.ErrForgotten) {
		t.Fatalf("Highest after a delete: %v, want ErrForgotten", err)
	}
	if _, _, found, err := store.Highest(ctx, "other"); err != nil || found {
		t.Fatalf("a name never recorded: found=%v err=%v", found, err)
	}
}
