package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// busInitRun runs garm bus init against url and returns its exit code and
// its lines.
func busInitRun(t *testing.T, url string, extra ...string) (int, []string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(t.Context(), append([]string{"bus", "init", "--nats", url}, extra...), &out, &errb)
	t.Logf("garm bus init %v: exit %d\n%s%s", extra, code, out.String(), errb.String())
	return code, strings.Split(strings.TrimSpace(out.String()), "\n")
}

// garmdAccepts fails t unless every check garmd, the approvals service and
// the sealer run at start accepts what is on the bus.
func garmdAccepts(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := t.Context()
	for name, err := range garmd.CheckBus(ctx, js) {
		if err != nil {
			t.Errorf("garmd refuses %s: %v", name, err)
		}
	}
	if _, err := pending.Open(ctx, js); err != nil {
		t.Errorf("the approvals service refuses its bucket: %v", err)
	}
	if err := sealer.CheckHeadStream(ctx, js); err != nil {
		t.Errorf("the sealer refuses its head stream: %v", err)
	}
}

func TestBusInitCreatesEveryStreamAndBucketGarmdAcceptsAndASecondRunFindsThemOk(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	code, lines := busInitRun(t, srv.URL(), "--approvals", "--ledger-heads")
	if code != exitOK || len(lines) != 8 {
		t.Fatalf("first run: exit %d, %d lines, want 0 and one line for each of 8 objects", code, len(lines))
	}
	for _, l := range lines {
		if !strings.Contains(l, "created") {
			t.Errorf("first run: %q, want created", l)
		}
	}
	garmdAccepts(t, js)
	code, lines = busInitRun(t, srv.URL(), "--approvals", "--ledger-heads")
	if code != exitOK || len(lines) != 8 {
		t.Fatalf("second run: exit %d, %d lines, want 0 and 8 lines", code, len(lines))
	}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) < 2 || f[1] != "ok" {
			t.Errorf("second run: %q, want ok", l)
		}
	}
	garmdAccepts(t, js)
}

func TestBusInitFencesUnfencedBucketsWithoutLosingASpentGrant(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	ctx := t.Context()
	// As `nats kv add` makes them: unfenced.
	grants, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: wire.GrantsSpentBucket, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := grants.Create(ctx, "spent-jti", []byte("call")); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, pending.BucketConfig(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: sealer.HeadStream, Subjects: []string{sealer.HeadSubject}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	code, lines := busInitRun(t, srv.URL(), "--approvals", "--ledger-heads")
	if code != exitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	for _, l := range lines {
		name := strings.Fields(l)[0]
		if (name == wire.GrantsSpentBucket || name == pending.Bucket || name == sealer.HeadStream) && !strings.Contains(l, "fenced") {
			t.Errorf("%q, want it fenced", l)
		}
	}
	garmdAccepts(t, js)
	if e, err := grants.Get(ctx, "spent-jti"); err != nil || string(e.Value()) != "call" {
		t.Errorf("the spent grant after fencing: %v, %v; want it kept", e, err)
	}
	if err := grants.Delete(ctx, "spent-jti"); err == nil {
		t.Error("a spent grant could be deleted after bus init")
	}
}

func TestBusInitRefusesToFenceABucketWhoseFenceWouldDropRecords(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	ctx := t.Context()
	grants, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: wire.GrantsSpentBucket, Storage: jetstream.FileStorage, History: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"first", "second"} {
		if _, err := grants.Put(ctx, "jti", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	code, lines := busInitRun(t, srv.URL())
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	var refused bool
	for _, l := range lines {
		if strings.HasPrefix(l, wire.GrantsSpentBucket) {
			refused = strings.Contains(l, "NOT READY") && strings.Contains(l, garmd.FenceGrantsBucketCommand())
		}
	}
	if !refused {
		t.Errorf("no refusal naming the fence command for %s in %q", wire.GrantsSpentBucket, lines)
	}
	history, err := grants.History(ctx, "jti")
	if err != nil || len(history) != 2 {
		t.Errorf("the key's records after a refused init: %d, %v; want both kept", len(history), err)
	}
}

func TestBusInitRefusesASecretInTheURLBeforeConnecting(t *testing.T) {
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"bus", "init", "--nats", "nats://admin:hunter2@127.0.0.1:1"}, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "--nats-user-file") {
		t.Errorf("exit %d, %q; want a usage refusal pointing at a credentials file", code, errb.String())
	}
}

func TestBusInitAuthenticatesWithTheRecipesUserFile(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, Users: []*server.User{{Username: "admin", Password: "s3cret-from-a-file"}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "admin.user"), filepath.Join(dir, "wrong.user")
	if err := os.WriteFile(good, []byte("admin\ns3cret-from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("admin\nguessed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := busInitRun(t, s.ClientURL(), "--nats-user-file", bad); code != exitFailed {
		t.Errorf("a wrong password: exit %d, want %d", code, exitFailed)
	}
	if code, lines := busInitRun(t, s.ClientURL(), "--nats-user-file", good); code != exitOK || len(lines) != 6 {
		t.Errorf("the admin's user file: exit %d, %d lines; want 0 and 6", code, len(lines))
	}
}
