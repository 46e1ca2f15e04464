package pending_test

import (
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

func TestOpenRefusesAMissingOrMisconfiguredBucketAndNamesEveryProblem(t *testing.T) {
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	ctx := bounded(t)
	if _, err := pending.Open(ctx, js); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open of a missing bucket: %v", err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pending.Bucket, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	_, err := pending.Open(ctx, js)
	if err == nil {
		t.Fatal("Open accepted a memory bucket without per-key TTLs")
	}
	for _, w := range []string{"file-backed", "per-key TTLs"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error does not say %q: %v", w, err)
		}
	}
}

func TestOpenBindsTheBucketEnsureMade(t *testing.T) {
	s, js := newStore(t)
	ctx := bounded(t)
	r, err := s.Ask(ctx, payment())
	if err != nil {
		t.Fatal(err)
	}
	bound, err := pending.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bound.Get(ctx, r.ID); err != nil {
		t.Errorf("the bound store does not see the request: %v", err)
	}
	if _, err := pending.Ensure(ctx, js, 1); err != nil {
		t.Errorf("Ensure on an existing bucket: %v", err)
	}
}

func TestOpenListsOldestFirstUpToTheLimit(t *testing.T) {
	s, _ := newStore(t)
	ctx := bounded(t)
	base := time.Now().UTC()
	var ids []string
	for i, subject := range []string{"a", "b", "c"} {
		q := payment()
		q.Subject = subject
		q.Created = base.Add(time.Duration(2-i) * time.Second)
		r, err := s.Ask(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	open, err := s.Open(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0].ID != ids[2] || open[1].ID != ids[1] {
		t.Errorf("Open(2) = %v, want the two oldest, oldest first", open)
	}
}
