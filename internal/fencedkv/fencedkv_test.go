package fencedkv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/internal/fencedkv"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

// denyingPurges is a bucket whose fence is the least the server takes with
// purges denied (roll-ups need the purge permission), so each test can see
// exactly what Check and Ensure do with it.
var denyingPurges = fencedkv.Bucket{
	Name:         "FENCED_TEST",
	Called:       "test bucket",
	Loss:         "a record could come back",
	Create:       "create it with the test's command",
	FenceCommand: "nats stream edit KV_FENCED_TEST --deny-purge --no-allow-rollup",
	Fence:        func(c *jetstream.StreamConfig) { c.DenyPurge, c.AllowRollup = true, false },
	FenceProblems: func(c jetstream.StreamConfig) []string {
		if !c.DenyPurge {
			return []string{"allows purging"}
		}
		return nil
	},
}

func bus(t *testing.T) (context.Context, jetstream.JetStream) {
	t.Helper()
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx, js
}

func config(storage jetstream.StorageType) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: denyingPurges.Name, Storage: storage, History: 1}
}

func assertSays(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q: %v", w, err)
		}
	}
}

func TestEnsureCreatesAMissingBucketFencedAndCheckBindsIt(t *testing.T) {
	ctx, js := bus(t)
	created, err := denyingPurges.Ensure(ctx, js, config(jetstream.FileStorage))
	if err != nil || !created {
		t.Fatalf("Ensure = %v, %v; want created", created, err)
	}
	kv, status, err := denyingPurges.Check(ctx, js)
	if err != nil || kv == nil || status == nil {
		t.Fatalf("Check of the bucket Ensure made: %v", err)
	}
	stream, err := js.Stream(ctx, denyingPurges.Stream())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx); err == nil {
		t.Fatal("the server purged the fenced bucket's stream")
	}
	if created, err := denyingPurges.Ensure(ctx, js, config(jetstream.FileStorage)); err != nil || created {
		t.Fatalf("Ensure of an existing fenced bucket = %v, %v; want it kept", created, err)
	}
}

func TestEnsureFencesAnExistingUnfencedBucketRatherThanRecreatingIt(t *testing.T) {
	ctx, js := bus(t)
	kv, err := js.CreateKeyValue(ctx, config(jetstream.FileStorage))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "kept", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if created, err := denyingPurges.Ensure(ctx, js, config(jetstream.FileStorage)); err != nil || created {
		t.Fatalf("Ensure = %v, %v; want the existing bucket fenced", created, err)
	}
	if _, _, err := denyingPurges.Check(ctx, js); err != nil {
		t.Fatalf("Check after Ensure fenced it: %v", err)
	}
	if e, err := kv.Get(ctx, "kept"); err != nil || string(e.Value()) != "1" {
		t.Fatalf("the record written before the fence: %v", err)
	}
}

func TestCheckRefusesAMissingBucketSayingHowToCreateIt(t *testing.T) {
	ctx, js := bus(t)
	_, _, err := denyingPurges.Check(ctx, js)
	assertSays(t, err, "test bucket FENCED_TEST does not exist", denyingPurges.Create)
}

func TestCheckRefusesAnUnfencedBucketNamingTheProblemAndTheFix(t *testing.T) {
	ctx, js := bus(t)
	if _, err := js.CreateKeyValue(ctx, config(jetstream.FileStorage)); err != nil {
		t.Fatal(err)
	}
	_, _, err := denyingPurges.Check(ctx, js)
	assertSays(t, err, "is not fenced", "allows purging", denyingPurges.Loss, denyingPurges.FenceCommand)
}

func TestCheckRefusesAMemoryBackedBucketEvenWhenFenced(t *testing.T) {
	ctx, js := bus(t)
	if _, err := denyingPurges.Ensure(ctx, js, config(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	_, _, err := denyingPurges.Check(ctx, js)
	assertSays(t, err, "memory storage", "not file-backed", "--storage file")
}

func TestCheckRefusesABucketThatDiscardsItsOldestKeys(t *testing.T) {
	ctx, js := bus(t)
	if _, err := denyingPurges.Ensure(ctx, js, config(jetstream.FileStorage)); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, denyingPurges.Stream())
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxMsgs, cfg.Discard = 10, jetstream.DiscardOld
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	_, _, err = denyingPurges.Check(ctx, js)
	assertSays(t, err, "discards its oldest keys", "max_msgs 10")
}

func TestEnsureRefusesAConfigurationForAnotherBucket(t *testing.T) {
	ctx, js := bus(t)
	other := config(jetstream.FileStorage)
	other.Bucket = "SOMETHING_ELSE"
	if _, err := denyingPurges.Ensure(ctx, js, other); err == nil {
		t.Fatal("Ensure created a bucket other than the one it describes")
	}
	if _, err := js.KeyValue(ctx, other.Bucket); err == nil {
		t.Fatal("the other bucket exists")
	}
}
