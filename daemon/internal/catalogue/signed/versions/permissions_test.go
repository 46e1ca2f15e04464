package versions_test

import (
	"context"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// permittedBus is a JetStream server admitting garmd with its derived
// permissions and an operator with every right.
func permittedBus(t *testing.T) string {
	t.Helper()
	set := natsperm.Derive(&artifact.Artifact{Model: &compile.Model{}})
	perms := set.Identity(natsperm.GarmdUser).Permissions
	users := []*server.User{
		{Username: natsperm.GarmdUser, Password: "pw", Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: perms.Publish.Allow, Deny: perms.Publish.Deny},
			Subscribe: &server.SubjectPermission{Allow: perms.Subscribe.Allow, Deny: perms.Subscribe.Deny},
		}},
		{Username: "operator", Password: "pw"},
	}
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(), Users: users})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

func jetStreamAs(t *testing.T, url, user string, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, append(opts, nats.UserInfo(user, "pw"))...)
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

func TestGarmdsDerivedPermissionsReadAndRaiseTheRecordAndCannotForgetIt(t *testing.T) {
	t.Parallel()
	ctx := bounded(t)
	url := permittedBus(t)
	if _, err := versions.Ensure(ctx, jetStreamAs(t, url, "operator"), 1); err != nil {
		t.Fatal(err)
	}
	garmd := jetStreamAs(t, url, natsperm.GarmdUser, nats.CustomInboxPrefix(natsperm.InboxPrefix(natsperm.GarmdUser)))
	store, err := versions.Open(ctx, garmd)
	if err != nil {
		t.Fatalf("garmd cannot open the bucket: %v", err)
	}
	for _, v := range []uint64{1, 2} {
		if _, err := store.Advance(ctx, "bank", raiseTo(v)); err != nil {
			t.Fatalf("garmd cannot raise the record to %d: %v", v, err)
		}
	}
	if rec, _, found, err := store.Highest(ctx, "bank"); err != nil || !found || rec.Version != 2 {
		t.Fatalf("garmd reads %+v found=%v err=%v, want version 2", rec, found, err)
	}
	s, err := garmd.Stream(ctx, "KV_"+versions.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	// Each refused request goes unanswered: the server drops the publish.
	refused := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	if err := s.Purge(refused()); err == nil {
		t.Error("garmd purged the bucket")
	}
	cfg := s.CachedInfo().Config
	cfg.DenyPurge = false
	if _, err := garmd.UpdateStream(refused(), cfg); err == nil {
		t.Error("garmd took the bucket's fence down")
	}
	if err := garmd.DeleteStream(refused(), "KV_"+versions.Bucket); err == nil {
		t.Error("garmd deleted the bucket")
	}
	if rec, _, _, err := store.Highest(ctx, "bank"); err != nil || rec.Version != 2 {
		t.Fatalf("after the refused attempts: %+v, %v; want version 2", rec, err)
	}
}
