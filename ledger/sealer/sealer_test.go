package sealer_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/ledgertest"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/ledger/verify"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

func startBus(t *testing.T) *ledgertest.Bus {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	return ledgertest.CreateStreams(t, js)
}

// runSealer runs a sealer until stop is called, which waits for it and
// returns what Run returned.
func runSealer(t *testing.T, js jetstream.JetStream, o sealer.Options) (stop func() error) {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sealer.Run(ctx, js, o) }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(ledgertest.Bound):
			t.Fatal("the sealer did not stop")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func heads(t *testing.T, js jetstream.JetStream) []sealer.StoredHead {
	t.Helper()
	hs, err := sealer.ReadHeads(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func lastSize(t *testing.T, js jetstream.JetStream) uint64 {
	h, _, ok, err := sealer.Latest(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return h.Size
}

// verifyStream checks every row of the stream against every head.
func verifyStream(t *testing.T, js jetstream.JetStream, keys head.Keys) verify.Summary {
	t.Helper()
	var vh []verify.Head
	for _, h := range heads(t, js) {
		vh = append(vh, verify.Head{Name: "head message " + strconv.FormatUint(h.Seq, 10), Head: h.Head, Err: h.Err})
	}
	v, err := verify.New(keys, vh)
	if err != nil {
		t.Fatal(err)
	}
	if err := rows.ScanStream(context.Background(), js, v.Row); err != nil {
		t.Fatal(err)
	}
	s, err := v.Finish(false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAHeadComesEveryThousandRowsAndTheRestWithinTheInterval(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	signer := ledgertest.Signer(t)
	bus.Publish(t, 0, 2500, 100)
	stop := runSealer(t, bus.JS, sealer.Options{Signer: signer, Every: 300 * time.Millisecond})
	ledgertest.WaitFor(t, "a head of all 2,500 rows", func() bool { return lastSize(t, bus.JS) == 2500 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the sealer stopped with %v", err)
	}
	var sizes []uint64
	for _, h := range heads(t, bus.JS) {
		sizes = append(sizes, h.Head.Size)
	}
	if len(sizes) != 3 || sizes[0] != 1000 || sizes[1] != 2000 || sizes[2] != 2500 {
		t.Fatalf("head sizes %v, want [1000 2000 2500]", sizes)
	}
	if s := verifyStream(t, bus.JS, ledgertest.Keys(signer)); s.Rows != 2500 || s.Heads != 3 {
		t.Fatalf("verified %+v", s)
	}
}

func TestASealerStoppedMidRunContinuesFromItsLastHeadAndSkipsNoRow(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	signer := ledgertest.Signer(t)
	o := sealer.Options{Signer: signer, EveryRows: 300, Every: 200 * time.Millisecond}
	stop := runSealer(t, bus.JS, o)
	bus.Publish(t, 0, 1000, 7)
	ledgertest.WaitFor(t, "a first head", func() bool { return lastSize(t, bus.JS) > 0 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the sealer stopped with %v", err)
	}
	sealedBefore := lastSize(t, bus.JS)
	// Rows written while no sealer runs.
	bus.Publish(t, 1000, 1333, 31)
	stop = runSealer(t, bus.JS, o)
	bus.Publish(t, 2333, 667, 13)
	ledgertest.WaitFor(t, "a head of all 3,000 rows", func() bool { return lastSize(t, bus.JS) == 3000 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("the restarted sealer stopped with %v", err)
	}
	s := verifyStream(t, bus.JS, ledgertest.Keys(signer))
	if s.Rows != 3000 || s.Unsealed != 0 {
		t.Fatalf("verified %+v", s)
	}
	t.Logf("first run sealed %d rows; %d heads in all", sealedBefore, s.Heads)
}

func TestTwoSealersAtOnceCannotForkTheChain(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	signer := ledgertest.Signer(t)
	o := sealer.Options{Signer: signer, EveryRows: 50, Every: 100 * time.Millisecond}
	stopA := runSealer(t, bus.JS, o)
	stopB := runSealer(t, bus.JS, o)
	bus.Publish(t, 0, 2000, 10)
	// One of them loses a race and returns; whoever survives, or a
	// restart, seals the rest.
	ledgertest.WaitFor(t, "heads", func() bool { return lastSize(t, bus.JS) > 0 })
	errA, errB := stopA(), stopB()
	t.Logf("sealer A: %v; sealer B: %v", errA, errB)
	stop := runSealer(t, bus.JS, o)
	ledgertest.WaitFor(t, "a head of all 2,000 rows", func() bool { return lastSize(t, bus.JS) == 2000 })
	_ = stop()
	if s := verifyStream(t, bus.JS, ledgertest.Keys(signer)); s.Rows != 2000 {
		t.Fatalf("verified %+v", s)
	}
}

func TestAnUnfencedHeadStreamIsRefused(t *testing.T) {
	t.Parallel()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	cfg := sealer.HeadStreamConfig(1)
	cfg.DenyDelete, cfg.DenyPurge = false, false
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	err := sealer.CheckHeadStream(context.Background(), js)
	if err == nil || !strings.Contains(err.Error(), "allows deleting heads") || !strings.Contains(err.Error(), "allows purging") {
		t.Fatalf("CheckHeadStream: %v", err)
	}
	err = sealer.Run(context.Background(), js, sealer.Options{Signer: ledgertest.Signer(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "not fenced") {
		t.Fatalf("Run on an unfenced stream: %v", err)
	}
}

func TestAHeadSignedByAnUnknownKeyIsNotContinued(t *testing.T) {
	t.Parallel()
	bus := startBus(t)
	bus.Publish(t, 0, 10, 10)
	stop := runSealer(t, bus.JS, sealer.Options{Signer: ledgertest.Signer(t), EveryRows: 10})
	ledgertest.WaitFor(t, "a head", func() bool { return lastSize(t, bus.JS) == 10 })
	_ = stop()
	err := sealer.Run(context.Background(), bus.JS, sealer.Options{Signer: ledgertest.Signer(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if !errors.Is(err, head.ErrSignature) {
		t.Fatalf("a sealer with another key continued: %v", err)
	}
}

func TestASealerWhoseConnectionDiesMidRunIsReplacedAndSkipsNoRow(t *testing.T) {
	t.Parallel()
	srv := garmtooltest.StartJetStream(t)
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	bus := ledgertest.CreateStreams(t, js)
	signer := ledgertest.Signer(t)
	o := sealer.Options{Signer: signer, EveryRows: 100, Every: 150 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// The first sealer has a connection of its own, closed under it as
	// if its process died: no goodbye, whatever it was doing.
	nc, ownJS := garmtooltest.ConnectJetStream(t, srv.URL())
	died := make(chan error, 1)
	go func() { died <- sealer.Run(context.Background(), ownJS, o) }()
	bus.Publish(t, 0, 700, 9)
	ledgertest.WaitFor(t, "a few heads", func() bool { return lastSize(t, bus.JS) >= 300 })
	bus.Publish(t, 700, 300, 9)
	nc.Close()
	select {
	case err := <-died:
		if err == nil {
			t.Fatal("the sealer returned no error when its connection died")
		}
	case <-time.After(ledgertest.Bound):
		t.Fatal("the sealer did not notice its connection died")
	}
	bus.Publish(t, 1000, 1000, 9) // written while no sealer runs
	stop := runSealer(t, bus.JS, o)
	ledgertest.WaitFor(t, "a head of all 2,000 rows", func() bool { return lastSize(t, bus.JS) == 2000 })
	_ = stop()
	if s := verifyStream(t, bus.JS, ledgertest.Keys(signer)); s.Rows != 2000 || s.Unsealed != 0 {
		t.Fatalf("verified %+v", s)
	}
}
