package jetstream_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"google.golang.org/protobuf/proto"
)

func TestCloseFlushesEveryAcceptedRowBeforeItReturns(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never})

	const n = 1000
	for i := range n {
		r.Record(row([]string{"acme", "globex", "initech"}[i%3], i))
	}
	closeRecorder(t, r)

	seen := map[string]bool{}
	for _, b := range readStream(t, js) {
		for _, e := range b.rows {
			seen[e.GetEventId()] = true
		}
	}
	if len(seen) != n {
		t.Errorf("the stream holds %d rows when Close returns, want %d", len(seen), n)
	}
	if c := r.Counts(); c.Recorded.Load() != n || c.FellBack.Load() != 0 {
		t.Errorf("recorded %d and fell back %d, want %d and 0", c.Recorded.Load(), c.FellBack.Load(), n)
	}
}

func TestARowRecordedAfterCloseIsLogged(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger()})
	closeRecorder(t, r)

	late := row("acme", 0)
	want := proto.CloneOf(late)
	r.Record(late)
	line := logs.rows(t)[want.GetEventId()]
	if line == nil {
		t.Fatal("the row recorded after Close is not in the log")
	}
	assertFallbackLine(t, line, want, ledgerjs.ReasonClosed)
	if got := r.Counts().FellBack.Load(); got != 1 {
		t.Errorf("fell back %d rows, want 1", got)
	}
	closeRecorder(t, r) // a second Close has nothing left to do
	if got := streamMsgs(t, js); got != 0 {
		t.Errorf("the stream holds %d messages, want none", got)
	}
}

func TestRowsRecordedWhileCloseRunsAreEachPublishedOrLogged(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), MaxBatchRows: 16})

	const writers, each = 8, 300
	rows := make([][]*ledgerv1.Event, writers)
	for w := range writers {
		for i := range each {
			rows[w] = append(rows[w], row(fmt.Sprintf("tenant%d", w), i))
		}
	}
	var want []*ledgerv1.Event
	for _, rs := range rows {
		for _, e := range rs {
			want = append(want, proto.CloneOf(e))
		}
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for _, e := range rows[w] {
				r.Record(e)
			}
		})
	}
	waitUntil(t, "some rows to be acknowledged", func() bool { return r.Counts().Recorded.Load() > 0 })
	closeRecorder(t, r)
	wg.Wait()

	logged := logs.rows(t)
	for id, line := range logged {
		if line["fallback_reason"] != ledgerjs.ReasonClosed {
			t.Errorf("the row %s fell back for %v, want only %s with a healthy stream", id, line["fallback_reason"], ledgerjs.ReasonClosed)
		}
	}
	assertEveryRowIsSomewhere(t, r, want, readStream(t, js), logged)
}

func TestCloseLogsWhatItCouldNotPublishOnceItsContextEnds(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	nc, js := connect(t, s)
	got := stallPublishes(t, nc)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), MaxBatchRows: 2, PublishTimeout: never})

	var want []*ledgerv1.Event
	for i := range 5 {
		e := row("acme", i)
		want = append(want, proto.CloneOf(e))
		r.Record(e)
	}
	receive(t, got, "the first batch's publish")

	ctx, cancel := context.WithCancel(t.Context())
	var err error
	returnsWithin(t, "Close once its context ends", func() {
		go cancel()
		err = r.Close(ctx)
	})
	if err == nil {
		t.Error("Close reports nothing, although no row was published")
	}
	logged := logs.rows(t)
	for _, e := range want {
		line := logged[e.GetEventId()]
		if line == nil {
			t.Errorf("the row %s is not in the log", e.GetEventId())
			continue
		}
		assertFallbackLine(t, line, e, ledgerjs.ReasonCloseDeadline)
	}
}
