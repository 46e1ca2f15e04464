package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/lake"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// killedAt says where a killed exporter stopped: how far the consumer was
// acknowledged against the stream.
func killedAt(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	c, err := js.Consumer(context.Background(), wire.LedgerStream, lake.DefaultDurable)
	if err != nil {
		t.Fatal(err)
	}
	info := c.CachedInfo()
	return fmt.Sprintf("acknowledged through stream message %d, delivered through %d", info.AckFloor.Stream, info.Delivered.Stream)
}

// buildGarm builds this command into a temporary directory.
func buildGarm(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "garm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s .: %v\n%s", bin, err, out)
	}
	return bin
}

func TestAnExporterKilledMidFileAndRestartedLosesNoRowAndDoublesNone(t *testing.T) {
	const (
		total   = 60_000 // rows, 50 a message: 1,200 messages
		perFile = 1_000  // so 60 ranges, none left for the time roll
		kills   = 3
	)
	bin := buildGarm(t)
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	bus := ledgertest.CreateStreams(t, js)
	s3 := lakeStore(t)
	bus.Publish(t, 0, total, 50)
	bucket := &lake.Bucket{Client: s3.Client(t), Name: "lake", Prefix: "ledger/"}
	ctx := context.Background()
	manifests := func() int {
		keys, err := bucket.List(ctx, lake.RangesPrefix)
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "ledger", "export", "--nats", srv.URL(), "--to", "s3://lake/ledger",
			"--roll-rows", fmt.Sprint(perFile), "--roll-every", "1m")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	deadline := time.Now().Add(2 * time.Minute)
	for k := range kills {
		// Kill it once it has stored a few more ranges, at whatever point
		// of a range it then is: buffering, writing the plan, or between
		// two PUTs.
		before := manifests()
		cmd := start()
		for n := manifests(); n < before+2+k && n < total/perFile; n = manifests() {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the exporter made no progress")
			}
			time.Sleep(time.Duration(5+7*k) * time.Millisecond)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		t.Logf("kill %d: SIGKILL with %d ranges planned, %s", k+1, manifests(), killedAt(t, js))
	}
	cmd := start()
	consumer, err := js.Consumer(ctx, wire.LedgerStream, lake.DefaultDurable)
	if err != nil {
		t.Fatal(err)
	}
	for {
		info, err := consumer.Info(ctx)
		if err == nil && info.AckFloor.Stream == total/50 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the restarted exporter did not reach the end of the stream: %+v %v", info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the exporter did not stop cleanly: %v", err)
	}

	// Count in the lake against the stream: each row once, none missing.
	onStream := 0
	if err := rows.ScanStream(ctx, js, func(rows.Row) error { onStream++; return nil }); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	inLake := 0
	if err := lake.Scan(ctx, bucket, func(r rows.Row) error {
		seen[r.EventID]++
		inLake++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	doubled := 0
	for _, n := range seen {
		if n > 1 {
			doubled++
		}
	}
	t.Logf("the stream holds %d rows; the lake %d rows, %d distinct, %d doubled, in %d ranges", onStream, inLake, len(seen), doubled, manifests())
	if onStream != total || inLake != total || len(seen) != total || doubled != 0 {
		t.Fatalf("stream %d, lake %d rows (%d distinct, %d doubled)", onStream, inLake, len(seen), doubled)
	}
	keys, err := bucket.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if _, _, _, ok := lake.ParseObjectKey(key); !ok && filepath.Dir(key)+"/" != filepath.Clean(lake.RangesPrefix)+"/" {
			t.Errorf("the lake holds %s, which is neither a lake file nor a manifest", key)
		}
	}
}
