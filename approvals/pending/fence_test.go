package pending_test

import (
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestOpenRefusesABucketThatAllowsPurgeOrRollUpsAndPrintsTheFix(t *testing.T) {
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	ctx := bounded(t)
	// What nats kv add makes: roll-ups and purges allowed.
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pending.Bucket, Storage: jetstream.FileStorage, LimitMarkerTTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	_, err := pending.Open(ctx, js)
	if err == nil {
		t.Fatal("Open bound a bucket that allows purges and roll-ups")
	}
	for _, w := range []string{"not fenced", "allows roll-ups", "allows purging", "TTL markers", pending.FenceCommand()} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q: %v", w, err)
		}
	}
}

func TestOneRollUpCannotEmptyTheBucket(t *testing.T) {
	s, js := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	// A publish on a key with a roll-up header would replace every key of
	// the bucket with itself; the fenced stream refuses it, as it refuses
	// a purge.
	for _, rollup := range []string{"all", "sub"} {
		msg := nats.NewMsg("$KV." + pending.Bucket + "." + pending.AskKey(r))
		msg.Header.Set("Nats-Rollup", rollup)
		if _, err := js.PublishMsg(ctx, msg); err == nil {
			t.Errorf("the stream took a roll-up (%s)", rollup)
		}
	}
	stream, err := js.Stream(ctx, "KV_"+pending.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx); err == nil {
		t.Error("the stream was purged")
	}
	kv, err := js.KeyValue(ctx, pending.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Purge(ctx, pending.AskKey(r)); err == nil {
		t.Error("a key was purged")
	}
	if got, d, err := s.Get(ctx, r.ID); err != nil || d != nil || got.ID != r.ID {
		t.Fatalf("after the attempts the request reads %v, %+v", err, d)
	}
	if again, err := s.Ask(ctx, payment()); err != nil || again.ID != r.ID {
		t.Fatalf("the reuse key is gone: %v, %s", err, again.ID)
	}
}
