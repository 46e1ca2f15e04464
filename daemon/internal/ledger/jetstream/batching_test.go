package jetstream_test

import (
	"context"
	"strings"
	"testing"
	"time"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

// never is a flush interval no test outlives, so only size and Close
// publish.
const never = time.Hour

func closeRecorder(t *testing.T, r *ledgerjs.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestRowsArriveAsOneBatchPerSubjectEachWithItsOwnMessageID(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never})

	var want []*ledgerv1.Event
	for i := range 10 {
		for _, tenant := range []string{"acme", "globex"} {
			e := row(tenant, i)
			want = append(want, proto.CloneOf(e))
			r.Record(e)
		}
	}
	closeRecorder(t, r)

	batches := readStream(t, js)
	if len(batches) != 2 {
		t.Fatalf("the stream holds %d messages, want one batch per tenant", len(batches))
	}
	ids := map[string]bool{}
	for _, b := range batches {
		if b.msgID == "" {
			t.Errorf("the batch on %s has no Nats-Msg-Id", b.subject)
		}
		if ids[b.msgID] {
			t.Errorf("two batches share the Nats-Msg-Id %s", b.msgID)
		}
		ids[b.msgID] = true
		if len(b.rows) != 10 {
			t.Errorf("the batch on %s holds %d rows, want 10", b.subject, len(b.rows))
		}
		for i, e := range b.rows {
			if got := wire.LedgerSubject(e.GetTenant(), e.GetApp()); got != b.subject {
				t.Errorf("a row of %s is in the batch on %s", got, b.subject)
			}
			if !proto.Equal(e, want[2*i+tenantIndex(e.GetTenant())]) {
				t.Errorf("row %d on %s is %v, want it as recorded and in order", i, b.subject, e)
			}
		}
	}
	if batches[0].subject == batches[1].subject {
		t.Errorf("both batches are on %s", batches[0].subject)
	}
	if got := r.Counts().Recorded.Load(); got != 20 {
		t.Errorf("recorded %d rows, want 20", got)
	}
	if len(logs.rows(t)) != 0 {
		t.Errorf("rows were logged although the stream took them all")
	}
}

func tenantIndex(tenant string) int {
	if tenant == "acme" {
		return 0
	}
	return 1
}

func TestAFullBatchIsPublishedAtTheRowLimitWithoutWaiting(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never})

	const n = 2*specBatchRows + 88
	for i := range n {
		r.Record(row("acme", i))
	}
	waitUntil(t, "two full batches in the stream", func() bool { return streamMsgs(t, js) == 2 })
	closeRecorder(t, r)

	batches := readStream(t, js)
	var sizes []int
	next := 0
	for _, b := range batches {
		sizes = append(sizes, len(b.rows))
		for _, e := range b.rows {
			if e.GetEventId() != row("acme", next).GetEventId() {
				t.Fatalf("the stream holds %s where %s belongs", e.GetEventId(), row("acme", next).GetEventId())
			}
			next++
		}
	}
	if len(sizes) != 3 || sizes[0] != specBatchRows || sizes[1] != specBatchRows || sizes[2] != 88 {
		t.Errorf("batches of %v rows, want [%d %d 88]", sizes, specBatchRows, specBatchRows)
	}
}

func TestABatchIsPublishedBeforeARowWouldTakeItPastTheByteLimit(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never})

	const n = 120
	var rowSize int
	for i := range n {
		e := row("acme", i)
		e.ErrorDetail = strings.Repeat("x", 10<<10)
		rowSize = proto.Size(e)
		r.Record(e)
	}
	waitUntil(t, "two batches at the byte limit in the stream", func() bool { return streamMsgs(t, js) == 2 })
	closeRecorder(t, r)

	batches := readStream(t, js)
	total := 0
	for i, b := range batches {
		total += len(b.rows)
		if b.size > specBatchBytes {
			t.Errorf("batch %d is %d bytes, more than %d", i, b.size, specBatchBytes)
		}
		if i < len(batches)-1 && b.size+rowSize+8 <= specBatchBytes {
			t.Errorf("batch %d is %d bytes and was published although another %d-byte row fitted", i, b.size, rowSize)
		}
		if len(b.rows) >= specBatchRows {
			t.Errorf("batch %d was cut by its row count, not its size", i)
		}
	}
	if len(batches) != 3 || total != n {
		t.Errorf("%d batches holding %d rows, want 3 holding %d", len(batches), total, n)
	}
}

func TestARowLargerThanTheByteLimitIsABatchOfItsOwn(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never, MaxBatchBytes: 4 << 10})

	r.Record(row("acme", 0))
	big := row("acme", 1)
	big.ErrorDetail = strings.Repeat("x", 8<<10)
	r.Record(big)
	r.Record(row("acme", 2))
	closeRecorder(t, r)

	var sizes []int
	for _, b := range readStream(t, js) {
		sizes = append(sizes, len(b.rows))
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1 {
		t.Errorf("batches of %v rows, want the large row alone between the others: [1 1 1]", sizes)
	}
}

func TestTheFlushIntervalPublishesALoneRow(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger()})

	r.Record(row("acme", 0))
	waitUntil(t, "the lone row to be acknowledged", func() bool { return r.Counts().Recorded.Load() == 1 })

	batches := readStream(t, js)
	if len(batches) != 1 || len(batches[0].rows) != 1 || batches[0].rows[0].GetEventId() != row("acme", 0).GetEventId() {
		t.Errorf("the stream holds %v, want the lone row in a batch of its own", batches)
	}
}

func TestAnUnencodableRowFallsBackAloneAndItsBatchIsPublished(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	_, js := connect(t, s)
	createLedgerStream(t, js)
	var logs logCapture
	r := newRecorder(t, js, ledgerjs.Options{Logger: logs.logger(), FlushInterval: never})

	bad := row("acme", 1)
	bad.ErrorDetail = "not utf-8: \xff"
	r.Record(row("acme", 0))
	r.Record(bad)
	r.Record(row("acme", 2))
	waitUntil(t, "the bad row to fall back", func() bool { return r.Counts().FellBack.Load() == 1 })
	closeRecorder(t, r)

	batches := readStream(t, js)
	if len(batches) != 1 || len(batches[0].rows) != 2 {
		t.Fatalf("the stream holds %v, want one batch of the two good rows", batches)
	}
	logged := logs.rows(t)
	line := logged[bad.GetEventId()]
	if len(logged) != 1 || line == nil {
		t.Fatalf("logged %d rows, want only %s", len(logged), bad.GetEventId())
	}
	if line["fallback_reason"] != ledgerjs.ReasonUnencodable {
		t.Errorf("the bad row fell back for %v, want %s", line["fallback_reason"], ledgerjs.ReasonUnencodable)
	}
	c := r.Counts()
	if c.Recorded.Load() != 2 || c.FellBack.Load() != 1 {
		t.Errorf("recorded %d and fell back %d, want 2 and 1", c.Recorded.Load(), c.FellBack.Load())
	}
}
