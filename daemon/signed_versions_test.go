package garmd_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestARestartRemembersTheHighestVersionAndARollbackIsAllowedOnlyByItsVersion(t *testing.T) {
	t.Parallel()
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	base := must(t, fixtureCatalogue)
	v1, v2 := variant(t, base, "v1"), variant(t, base, "v2")
	s := startStack(t, withSignedFileCatalogue(t, keys, v2, sign(t, v2, 2, owner)))
	restart := func(data []byte, version, rollbackTo uint64) error {
		return newDaemonLike(t, s, func(c *garmd.Config) {
			withSignedFileCatalogue(t, keys, data, sign(t, data, version, owner))(c)
			c.CatalogueAllowRollbackTo = rollbackTo
		})
	}
	if err := restart(v1, 1, 0); err == nil || !strings.Contains(err.Error(), "check rollback") {
		t.Fatalf("a restart on version 1 after 2: %v, want a rollback refusal", err)
	}
	if err := restart(v1, 1, 3); err == nil || !strings.Contains(err.Error(), "check rollback") {
		t.Fatalf("a restart on version 1 allowing a rollback to 3: %v, want a rollback refusal", err)
	}
	if err := restart(v1, 1, 1); err != nil {
		t.Fatalf("a restart on version 1 allowing a rollback to 1: %v", err)
	}
	// The rollback is what the bus remembers now: version 1 restarts
	// without the flag, and version 2 is newer again.
	if err := restart(v1, 1, 0); err != nil {
		t.Fatalf("a restart on version 1 after the rollback: %v", err)
	}
	if err := restart(v2, 2, 0); err != nil {
		t.Fatalf("a restart on version 2 after the rollback to 1: %v", err)
	}
	if err := restart(v1, 1, 0); err == nil {
		t.Fatal("a restart on version 1 after 2 was served again started")
	}
	// The flag left in place does not allow the same rollback twice.
	if err := restart(v1, 1, 1); err == nil || !strings.Contains(err.Error(), "the one rollback to version 1 was made") {
		t.Fatalf("a second rollback to version 1: %v, want it refused as made", err)
	}
}

func TestTheAllowedRollbackOverS3IsMadeOnceAndAReplayAfterItIsRefused(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	base := must(t, fixtureCatalogue)
	v1, v2, v3 := variant(t, base, "v1"), variant(t, base, "v2"), variant(t, base, "v3")
	s := startStack(t, withSignedS3Catalogue(store, keys, v1, sign(t, v1, 1, owner), shortPoll), func(c *garmd.Config) {
		c.CatalogueAllowRollbackTo = 1
	})
	for _, p := range []struct {
		data    []byte
		version uint64
	}{{v2, 2}, {v1, 1}, {v3, 3}} {
		digest := store.publishPair(p.data, sign(t, p.data, p.version, owner))
		eventually(t, "version served", func() bool { return s.servingDigest() == digest })
	}
	store.publishPair(v1, sign(t, v1, 1, owner))
	refusedWith(t, s, "rollback", artifact.Digest(v1), artifact.Digest(v3))
	if !strings.Contains(s.logs.String(), "the one rollback to version 1 was made") {
		t.Errorf("the refusal does not say the rollback was made:\n%s", s.logs)
	}
}

// startReplica is a second garmd with s's configuration, logging apart.
func startReplica(t *testing.T, s *stack) (url string, logs *logBuffer) {
	t.Helper()
	cfg := s.cfg
	logs = &logBuffer{}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	d, err := garmd.New(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout + cfg.ToolTimeout):
			t.Error("the replica did not stop")
		}
	})
	return "http://" + d.Addr().String(), logs
}

func TestTwoReplicasAgreeOnTheHighestVersionServed(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	base := must(t, fixtureCatalogue)
	v1, v2 := variant(t, base, "v1"), variant(t, base, "v2")
	s := startStack(t, withSignedS3Catalogue(store, keys, v1, sign(t, v1, 1, owner), shortPoll))
	other, otherLogs := startReplica(t, s)
	servedBy := func(base string) string {
		ans, err := s.postTo(base, addPath, s.token("public"), `{"a": 1, "b": 2}`)
		if err != nil {
			t.Fatal(err)
		}
		return ans.header.Get("Garm-Catalogue-Digest")
	}
	// Both see v2 and race to record it; both serve it.
	d2 := store.publishPair(v2, sign(t, v2, 2, owner))
	eventually(t, "both replicas serving v2", func() bool { return servedBy(s.url) == d2 && servedBy(other) == d2 })
	// A replay of v1 is refused by both.
	store.publishPair(v1, sign(t, v1, 1, owner))
	refusedWith(t, s, "rollback", artifact.Digest(v1), d2)
	eventually(t, "the other replica's refusal", func() bool { return strings.Contains(otherLogs.String(), `"check":"rollback"`) })
	if servedBy(other) != d2 {
		t.Error("the other replica does not serve v2 after the replay")
	}
	// A third replica starting now on v1 is refused: the bus remembers.
	if err := newDaemonLike(t, s, func(*garmd.Config) {}); err == nil || !strings.Contains(err.Error(), "check rollback") {
		t.Fatalf("a replica starting on v1 after v2: %v, want a rollback refusal", err)
	}
}

func TestADeletedVersionRecordAdmitsNothingAndRefusesAStart(t *testing.T) {
	store := startCatalogueStore(t)
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	base := must(t, fixtureCatalogue)
	v1, v2 := variant(t, base, "v1"), variant(t, base, "v2")
	s := startStack(t, withSignedS3Catalogue(store, keys, v2, sign(t, v2, 2, owner), shortPoll))
	// Whoever may write the bucket deletes the record, hoping an older
	// catalogue then reads as the first ever served.
	nc, err := nats.Connect(s.bus.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	kv, err := js.KeyValue(ctx, versions.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, versions.Key(signedName)); err != nil {
		t.Fatal(err)
	}
	store.publishPair(v1, sign(t, v1, 1, owner))
	const said = "garmd: the highest catalogue version served cannot be read or recorded on the bus; the serving generation stays"
	eventually(t, "the forgotten record said", func() bool { return len(s.logRecords(said)) > 0 })
	if d := s.servingDigest(); d != artifact.Digest(v2) {
		t.Errorf("after the record was deleted %s serves, want v2", d)
	}
	if err := newDaemonLike(t, s, func(*garmd.Config) {}); err == nil || !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("a start with the record deleted: %v, want a refusal naming the deletion", err)
	}
}

func TestGarmdRefusesAnUnfencedVersionsBucketPrintingTheFix(t *testing.T) {
	t.Parallel()
	keys := newSigningKeys(t)
	owner := newSigner(t, signature.AlgEdDSA)
	keys.publishKeys(groupOf{owner, ""})
	data := must(t, fixtureCatalogue)
	s := startStack(t, withSignedFileCatalogue(t, keys, data, sign(t, data, 1, owner)))
	nc, err := nats.Connect(s.bus.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	// As `nats kv add` makes it: unfenced.
	if err := js.DeleteKeyValue(ctx, versions.Bucket); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, versions.BucketConfig(1)); err != nil {
		t.Fatal(err)
	}
	err = newDaemonLike(t, s, func(*garmd.Config) {})
	if err == nil || !strings.Contains(err.Error(), versions.FenceCommand()) {
		t.Fatalf("garmd on an unfenced versions bucket: %v, want a refusal printing %q", err, versions.FenceCommand())
	}
	// Without --catalogue-keys the bucket is not looked at.
	if err := newDaemonLike(t, s, func(c *garmd.Config) {
		c.Catalogue, c.CatalogueKeys = writeTemp(t, data), ""
	}); err != nil {
		t.Fatalf("an unsigned garmd beside an unfenced versions bucket: %v", err)
	}
}
