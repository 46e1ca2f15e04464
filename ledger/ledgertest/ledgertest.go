package ledgertest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Bound bounds every wait of these tests.
const Bound = 30 * time.Second

// Bus is a JetStream with GARM_LEDGER and the fenced head stream.
type Bus struct {
	JS jetstream.JetStream
}

// CreateStreams creates both streams on js, the client of a test's
// server (garmtooltest.StartJetStream: this package embeds none, as
// decision 0047 keeps the server out of every package but the dev ones).
func CreateStreams(t testing.TB, js jetstream.JetStream) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, sealer.HeadStreamConfig(1)); err != nil {
		t.Fatal(err)
	}
	return &Bus{JS: js}
}

// Event is the nth test row: tags included, so its encoding depends on
// deterministic marshalling.
func Event(n int) *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId: fmt.Sprintf("ev-%07d", n),
		Time:    timestamppb.New(time.Unix(1_765_000_000+int64(n), 0)),
		Tenant:  "acme",
		App:     "garmd",
		Feature: "tickets",
		Tags:    map[string]string{"a": "1", "b": "2", "c": fmt.Sprint(n)},
	}
}

// Publish writes rows first..first+n-1 as Batch messages of per rows each,
// in order.
func (b *Bus) Publish(t testing.TB, first, n, per int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	defer cancel()
	for i := first; i < first+n; i += per {
		batch := &ledgerv1.Batch{}
		for j := i; j < min(i+per, first+n); j++ {
			batch.Events = append(batch.Events, Event(j))
		}
		data, err := proto.Marshal(batch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.JS.Publish(ctx, wire.LedgerSubject("acme", "garmd"), data); err != nil {
			t.Fatal(err)
		}
	}
}

// Signer is a sealer key made for the test.
func Signer(t testing.TB) head.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := head.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Keys are the public keys of signers.
func Keys(signers ...head.Signer) head.Keys {
	k := head.Keys{}
	for _, s := range signers {
		k[s.KeyID] = s.Key.Public().(ed25519.PublicKey)
	}
	return k
}

// WaitFor polls cond until it holds or Bound passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", Bound, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
