package jetstream_test

import (
	"context"
	"testing"
	"time"

	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 20 * time.Second

// connect is a JetStream client of srv that reconnects, closed when the
// test ends.
func connect(t testing.TB, srv *garmtooltest.Server) jetstream.JetStream {
	t.Helper()
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	return js
}

// createBucket creates the grants bucket as cfg says, its name filled in.
func createBucket(t testing.TB, js jetstream.JetStream, cfg jetstream.KeyValueConfig) jetstream.KeyValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	cfg.Bucket = wire.GrantsSpentBucket
	kv, err := js.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func bounded(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// createFencedBucket creates the grants bucket as cfg says and fences it, as
// an operator following docs/operators.md does.
func createFencedBucket(t testing.TB, js jetstream.JetStream, cfg jetstream.KeyValueConfig) jetstream.KeyValue {
	t.Helper()
	kv := createBucket(t, js, cfg)
	if err := replayjs.Fence(bounded(t), js, wire.GrantsSpentBucket); err != nil {
		t.Fatal(err)
	}
	return kv
}
