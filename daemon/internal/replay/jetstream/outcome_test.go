package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/busoutcome/busoutcometest"
	"github.com/garm-dev/garm/daemon/internal/replay"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func losing(js jetstream.JetStream, n int32, landed func(context.Context, *nats.Msg) error) *busoutcometest.LostAnswers {
	l := busoutcometest.Losing(js, n)
	l.Landed = landed
	return l
}

func TestASpendWhoseAnswerWasLostIsResolvedByReadingItBack(t *testing.T) {
	key := replay.Key("https://approvals.example", "g-lost")
	cases := []struct {
		name string
		// landed is what reached the store while the answer was lost.
		landed func(js jetstream.JetStream) func(context.Context, *nats.Msg) error
		want   error
	}{
		{"this call's write landed", func(js jetstream.JetStream) func(context.Context, *nats.Msg) error {
			return func(ctx context.Context, msg *nats.Msg) error { _, err := js.PublishMsg(ctx, msg); return err }
		}, nil},
		{"nothing landed", func(jetstream.JetStream) func(context.Context, *nats.Msg) error {
			return func(context.Context, *nats.Msg) error { return nil }
		}, nil},
		{"another call's write landed first", func(js jetstream.JetStream) func(context.Context, *nats.Msg) error {
			return func(ctx context.Context, msg *nats.Msg) error {
				other := &nats.Msg{Subject: msg.Subject, Data: []byte("call-other"), Header: msg.Header}
				_, err := js.PublishMsg(ctx, other)
				return err
			}
		}, replay.ErrSpent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js := connect(t, garmtooltest.StartJetStream(t))
			kv := createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
			s := replayjs.New(losing(js, 2, c.landed(js)), wire.GrantsSpentBucket)
			err := s.Spend(bounded(t), key, "call-1")
			if !errors.Is(err, c.want) && err != c.want {
				t.Fatalf("Spend = %v, want %v", err, c.want)
			}
			entry, gerr := kv.Get(bounded(t), key)
			if gerr != nil {
				t.Fatal(gerr)
			}
			if owner := string(entry.Value()); (c.want == nil) != (owner == "call-1") {
				t.Fatalf("the record names %q, and Spend said %v", owner, err)
			}
		})
	}
}

func TestASpendWhoseOutcomeStaysUnknownEndsAtTheDeadlineUnspent(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	kv := createFencedBucket(t, js, jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	// Every answer is lost and nothing lands.
	s := replayjs.New(losing(js, 1<<30, func(context.Context, *nats.Msg) error { return nil }), wire.GrantsSpentBucket)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := s.Spend(ctx, replay.Key("https://approvals.example", "g-unknown"), "call-1")
	if err == nil || errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend = %v, want an unknown outcome", err)
	}
	if _, err := kv.Get(bounded(t), replay.Key("https://approvals.example", "g-unknown")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the key reads %v", err)
	}
}

// TestASpendWhileTheBusIsAwayIsNotWrittenAndTheGrantStaysUsable is the
// defect of a whole-bus restart: a spend made while the bus was away sat in
// the client's reconnect buffer and was applied after garmd had refused the
// call, burning the grant. garmd's connection keeps no such buffer.
func TestASpendWhileTheBusIsAwayIsNotWrittenAndTheGrantStaysUsable(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	createFencedBucket(t, connect(t, srv), jetstream.KeyValueConfig{Storage: jetstream.FileStorage})
	disconnected, reconnected := make(chan struct{}, 1), make(chan struct{}, 1)
	nc, err := nats.Connect(srv.URL(), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { disconnected <- struct{}{} }),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := replayjs.New(js, wire.GrantsSpentBucket)
	key := replay.Key("https://approvals.example", "g-away")

	srv.Stop()
	await(t, disconnected)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Spend(ctx, key, "call-refused"); err == nil || errors.Is(err, replay.ErrSpent) {
		t.Fatalf("Spend while the bus is away = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the spend waited for its deadline instead of failing at once")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	await(t, reconnected)
	if err := s.Spend(bounded(t), key, "call-retried"); err != nil {
		t.Fatalf("the retried call's Spend = %v: the refused call's spend was applied after all", err)
	}
}

func await(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitBound):
		t.Fatal("the connection event did not come")
	}
}
