package jetstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/busoutcome/busoutcometest"
	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// connectWithoutBuffer is a client of srv as garmd connects: no reconnect
// buffer, so a write while the server is away fails at once.
func connectWithoutBuffer(t testing.TB, srv *garmtooltest.Server) (*nats.Conn, jetstream.JetStream, <-chan struct{}) {
	t.Helper()
	disconnected := make(chan struct{}, 16)
	nc, err := nats.Connect(srv.URL(), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { disconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, disconnected
}

func TestABatchWhoseAnswerWasLostIsOfferedAgainUnderItsIdAndLandsOnce(t *testing.T) {
	_, js := connect(t, garmtooltest.StartJetStream(t))
	createLedgerStream(t, js)
	lossy := busoutcometest.Losing(js, 2)
	var logs logCapture
	r := newRecorder(t, lossy, ledgerjs.Options{Logger: logs.logger(), MaxBatchRows: 3})
	for n := range 3 {
		r.Record(row("acme", n))
	}
	waitUntil(t, "the batch acknowledged", func() bool { return r.Counts().Recorded.Load() == 3 })
	stream := readStream(t, js)
	if len(stream) != 1 || len(stream[0].rows) != 3 {
		t.Fatalf("the stream holds %d messages; want the one batch, once", len(stream))
	}
	if lines := logs.rows(t); len(lines) != 0 {
		t.Fatalf("%d rows fell back although their batch landed", len(lines))
	}
}

func TestABatchDefinitelyNotWrittenFallsBackAtOnce(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js, disconnected := connectWithoutBuffer(t, srv)
	createLedgerStream(t, js)
	var logs logCapture
	// Every wait is an hour: only a definite failure lets the rows go.
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), MaxBatchRows: 1, PublishTimeout: time.Hour})
	srv.Stop()
	<-disconnected
	want := []*ledgerv1.Event{row("acme", 0), row("acme", 1)}
	for _, e := range want {
		r.Record(proto.CloneOf(e))
	}
	waitUntil(t, "the rows fallen back", func() bool { return r.Counts().FellBack.Load() == 2 })
	lines := logs.rows(t)
	for _, e := range want {
		assertFallbackLine(t, lines[e.GetEventId()], e, ledgerjs.ReasonPublishFailed)
	}
}

// TestABusRestartUnderLoadPutsEveryRowInTheStreamOrTheLogNeverBoth is the
// defect of a bus restart: a batch whose publish timed out fell back to the
// log and then reached the stream from the client's reconnect buffer, so
// hundreds of rows were in both. Without the buffer, with unknown outcomes
// retried under their id, each row is in exactly one place.
func TestABusRestartUnderLoadPutsEveryRowInTheStreamOrTheLogNeverBoth(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	_, js, disconnected := connectWithoutBuffer(t, srv)
	createLedgerStream(t, js)
	var logs logCapture
	r, err := ledgerjs.New(js, ledgerjs.Options{Logger: logs.logger(), PublishTimeout: 200 * time.Millisecond, MaxBatchRows: 16})
	if err != nil {
		t.Fatal(err)
	}
	var want []*ledgerv1.Event
	record := func(n int) {
		for range n {
			e := row("acme", len(want))
			want = append(want, proto.CloneOf(e))
			r.Record(e)
		}
	}
	// Stopped while batches are on their way: their outcomes are unknown.
	record(500)
	srv.Stop()
	<-disconnected
	// Recorded while it is away: logged when a publish is definitely not
	// written, or held while an unknown batch is retried.
	record(300)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	record(500)
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}
	_, reader := connect(t, srv)
	stream, logged := readStream(t, reader), logs.rows(t)
	inStream := map[string]int{}
	for _, b := range stream {
		for _, e := range b.rows {
			inStream[e.GetEventId()]++
		}
	}
	both, missing := 0, 0
	for _, e := range want {
		id := e.GetEventId()
		n := inStream[id]
		switch {
		case n > 1:
			t.Errorf("row %s is on the stream %d times", id, n)
		case n == 1 && logged[id] != nil:
			both++
		case n == 0 && logged[id] == nil:
			missing++
		}
	}
	if both != 0 || missing != 0 {
		t.Fatalf("%d rows are in both the stream and the log, %d in neither", both, missing)
	}
	t.Logf("%d rows: %d on the stream, %d in the log", len(want), len(inStream), len(logged))
}
