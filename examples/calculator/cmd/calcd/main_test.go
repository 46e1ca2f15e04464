package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// syncBuffer is a log sink the test can read while calcd writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startCalcd runs calcd against url until the returned stop is called; stop
// returns what run returned.
func startCalcd(t *testing.T, ctx context.Context, url string, logs *syncBuffer, args ...string) (stop func() error) {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx, append([]string{"--nats", url}, args...), logs) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() error {
		cancel()
		select {
		case err := <-done:
			done <- err // for the cleanup
			return err
		case <-ctx.Done():
			t.Fatalf("calcd did not stop\n%s", logs.String())
			return nil
		}
	}
}

// addUntilAnswered calls add until calcd answers it: until calcd has
// (re)connected and subscribed, there are no responders or no connection.
func addUntilAnswered(t *testing.T, ctx context.Context, nc *nats.Conn, logs *syncBuffer) float64 {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		var out calcv1.AddResponse
		err := garmtooltest.Call(attempt, nc, calcv1.CalculatorTools[0], &calcv1.AddRequest{A: proto.Float64(1), B: proto.Float64(2)}, &out)
		cancel()
		if err == nil {
			return out.GetSum()
		}
		var coded *toolbind.CodedError
		if errors.As(err, &coded) {
			t.Fatalf("calcd refused: %v\n%s", err, logs.String())
		}
		select {
		case <-ctx.Done():
			t.Fatalf("calcd never answered (last: %v)\n%s", err, logs.String())
		case <-tick.C:
		}
	}
}

func TestCalcdServesTheCalculatorAndDrainsWhenCancelled(t *testing.T) {
	server := garmtooltest.StartServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var logs syncBuffer
	stop := startCalcd(t, ctx, server.URL(), &logs, "--concurrency", "2", "--drain-timeout", "5s")
	nc, err := nats.Connect(server.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()

	if sum := addUntilAnswered(t, ctx, nc, &logs); sum != 3 {
		t.Fatalf("calcd added 1 and 2 to %v", sum)
	}
	if err := stop(); err != nil {
		t.Fatalf("calcd returned %v\n%s", err, logs.String())
	}
	for _, line := range []string{"calcd: connecting to NATS", "garmtool: serving", "concurrency=2", "drain_timeout=5s", "garmtool: draining", "garmtool: stopped"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs.String())
		}
	}
}

func TestCalcdKeepsServingAcrossABusRestart(t *testing.T) {
	server := garmtooltest.StartServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var logs syncBuffer
	stop := startCalcd(t, ctx, server.URL(), &logs)
	nc, err := nats.Connect(server.URL(), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	addUntilAnswered(t, ctx, nc, &logs)

	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	if sum := addUntilAnswered(t, ctx, nc, &logs); sum != 3 {
		t.Fatalf("after the restart calcd added 1 and 2 to %v", sum)
	}
	// calcd's reconnect callback may log after its first answer on the new
	// connection: wait for the line, bounded by ctx.
	for !strings.Contains(logs.String(), "calcd: reconnected to NATS") {
		select {
		case <-ctx.Done():
			t.Fatalf("the log does not say calcd reconnected:\n%s", logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRedactedHidesPasswords(t *testing.T) {
	got := redacted("nats://alice:secret@127.0.0.1:4222, nats://127.0.0.1:4223")
	if strings.Contains(got, "secret") || !strings.Contains(got, "alice@127.0.0.1:4222") || !strings.Contains(got, "127.0.0.1:4223") {
		t.Fatalf("redacted = %q", got)
	}
}

func TestCalcdRefusesWhatItDoesNotUnderstand(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"extra"}, {"--concurrency", "many"}} {
		var logs syncBuffer
		if err := run(t.Context(), args, &logs); err == nil {
			t.Errorf("calcd %q was accepted", args)
		}
	}
}

func TestCalcdHelpIsNotAFailure(t *testing.T) {
	var logs syncBuffer
	if err := run(t.Context(), []string{"-h"}, &logs); err != nil || !strings.Contains(logs.String(), "-nats") {
		t.Fatalf("calcd -h = %v\n%s", err, logs.String())
	}
}

// calcd closing its connection at shutdown is not a lost bus; the bus going
// away is.
func TestCalcdWarnsOfALostBusOnlyWhenItIsLost(t *testing.T) {
	server := garmtooltest.StartServer(t)
	connect := func(logs *syncBuffer) (*nats.Conn, chan struct{}) {
		closed := make(chan struct{})
		nc, err := nats.Connect(server.URL(), append(busEvents(slog.New(slog.NewTextHandler(logs, nil))),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) }))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc, closed
	}
	const lost = "calcd: disconnected from NATS"

	var clean syncBuffer
	nc, closed := connect(&clean)
	nc.Close()
	<-closed // nats.go runs a connection's callbacks in order, this one last
	if strings.Contains(clean.String(), lost) {
		t.Errorf("a clean close is logged as a lost bus:\n%s", clean.String())
	}

	var gone syncBuffer
	connect(&gone)
	server.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(gone.String(), lost) {
		if time.Now().After(deadline) {
			t.Fatalf("the bus went away and the log never said so:\n%s", gone.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
