package jetstream_test

import (
	"context"
	"testing"
	"time"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

func TestAMissingStreamFallsBackToLogLinesWithEveryColumn(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger()})

	var want []*ledgerv1.Event
	for i := range 5 {
		e := row("acme", i)
		want = append(want, proto.CloneOf(e))
		r.Record(e)
	}
	waitUntil(t, "the rows to fall back", func() bool { return r.Counts().FellBack.Load() == 5 })

	logged := logs.rows(t)
	for _, e := range want {
		line := logged[e.GetEventId()]
		if line == nil {
			t.Errorf("the row %s is not in the log", e.GetEventId())
			continue
		}
		assertFallbackLine(t, line, e, ledgerjs.ReasonPublishFailed)
	}
	warned := false
	for _, line := range logs.lines(t) {
		if line["level"] == "WARN" && line["subject"] == wire.LedgerSubject("acme", "garmd") && line["rows"] == float64(5) {
			warned = true
		}
	}
	if !warned {
		t.Error("no warning names the batch that could not be published")
	}
	if c := r.Counts(); c.Recorded.Load() != 0 || c.Lost.Load() != 0 {
		t.Errorf("recorded %d and lost %d, want none", c.Recorded.Load(), c.Lost.Load())
	}
}

// stallPublishes answers nothing on the ledger subjects, so a publish waits
// for an acknowledgement that never comes; got receives each message.
func stallPublishes(t testing.TB, nc *nats.Conn) <-chan *nats.Msg {
	t.Helper()
	got := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(wire.LedgerStreamSubjects, got)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return got
}

func receive(t *testing.T, got <-chan *nats.Msg, what string) {
	t.Helper()
	select {
	case <-got:
	case <-time.After(waitBound):
		t.Fatalf("still waiting after %v for %s", waitBound, what)
	}
}

// returnsWithin runs f and fails the test if it has not returned within
// waitBound.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitBound):
		t.Fatalf("%s has not returned after %v", what, waitBound)
	}
}

func TestAFullBufferFallsBackAtOnceWithoutBlocking(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	nc, js := connect(t, s)
	got := stallPublishes(t, nc)
	var logs logCapture
	const buffer = 4
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), MaxBatchRows: 1, BufferRows: buffer, PublishTimeout: time.Hour})

	first := row("acme", 0)
	r.Record(first)
	receive(t, got, "the first row's publish")

	var rows []*ledgerv1.Event
	for i := 1; i <= buffer+5; i++ {
		rows = append(rows, row("acme", i))
	}
	returnsWithin(t, "recording into a full buffer", func() {
		for _, e := range rows {
			r.Record(e)
		}
	})
	if got := r.Counts().FellBack.Load(); got != 5 {
		t.Fatalf("%d rows fell back, want the 5 beyond the buffer of %d", got, buffer)
	}
	logged := logs.rows(t)
	for _, e := range rows[buffer:] {
		line := logged[e.GetEventId()]
		if line == nil {
			t.Errorf("the row %s is not in the log", e.GetEventId())
			continue
		}
		assertFallbackLine(t, line, e, ledgerjs.ReasonBufferFull)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var err error
	returnsWithin(t, "Close with an ended context", func() { err = r.Close(ctx) })
	if err == nil {
		t.Error("Close reports no rows falling back, although none was published")
	}
	logged = logs.rows(t)
	for _, e := range append([]*ledgerv1.Event{first}, rows[:buffer]...) {
		line := logged[e.GetEventId()]
		if line == nil {
			t.Errorf("the row %s accepted before Close is not in the log", e.GetEventId())
			continue
		}
		assertFallbackLine(t, line, e, ledgerjs.ReasonCloseDeadline)
	}
	if c := r.Counts(); c.FellBack.Load() != uint64(len(rows)+1) || c.Recorded.Load() != 0 || c.Lost.Load() != 0 {
		t.Errorf("fell back %d, recorded %d, lost %d; want %d, 0, 0", c.FellBack.Load(), c.Recorded.Load(), c.Lost.Load(), len(rows)+1)
	}
}

func TestAServerShutDownMidRunLosesNoRow(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	nc, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), PublishTimeout: 100 * time.Millisecond})

	var want []*ledgerv1.Event
	record := func(n int) {
		for range n {
			tenant := []string{"acme", "globex", "initech"}[len(want)%3]
			e := row(tenant, len(want))
			want = append(want, proto.CloneOf(e))
			r.Record(e)
		}
	}
	record(1000)
	waitUntil(t, "some rows to be acknowledged", func() bool { return r.Counts().Recorded.Load() > 0 })
	s.Stop()
	record(100)
	closeCtx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	_ = r.Close(closeCtx) // rows fell back while closing; the log holds them
	nc.Close()

	t.Logf("recorded %d fell back %d", r.Counts().Recorded.Load(), r.Counts().FellBack.Load())
	if r.Counts().FellBack.Load() < 100 {
		t.Errorf("%d rows fell back, want at least the 100 recorded while the server was down", r.Counts().FellBack.Load())
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	_, js = connect(t, s)
	assertEveryRowIsSomewhere(t, r, want, readStream(t, js), logs.rows(t))
}
