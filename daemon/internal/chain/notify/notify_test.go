package notify_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

func TestARowArrivesOnItsTenantsAndToolsSubjectIntact(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createNotifyStream(t, js)
	n := newNotifier(t, js, notify.Options{})
	e := completedRow(1)
	e.Tenant = "globex.eu" // a dot must not split the tenant's token
	notifyTimed(t, n, e)
	waitUntil(t, "the row to be published", func() bool { return n.Counts().Published == 1 })
	got := readStream(t, js)
	if len(got) != 1 {
		t.Fatalf("the stream holds %d messages, want 1", len(got))
	}
	if want := wire.NotifySubject("globex.eu", e.GetTool()); got[0].subject != want {
		t.Errorf("subject %q, want %q", got[0].subject, want)
	}
	if got[0].msgID != e.GetEventId() {
		t.Errorf("Nats-Msg-Id %q, want the event id %q", got[0].msgID, e.GetEventId())
	}
	if !proto.Equal(got[0].row, e) {
		t.Errorf("the stored row is\n%v\nwant\n%v", got[0].row, e)
	}
	if c := n.Counts(); c.Failed != 0 || c.Dropped != 0 {
		t.Errorf("counts %+v, want one published and nothing else", c)
	}
}

func TestARowNotifiedTwiceIsHeldOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createNotifyStream(t, js)
	n := newNotifier(t, js, notify.Options{})
	n.Notify(completedRow(1))
	n.Notify(completedRow(1))
	waitUntil(t, "both to be acknowledged", func() bool { return n.Counts().Published == 2 })
	if got := readStream(t, js); len(got) != 1 {
		t.Errorf("the stream holds %d messages, want the repeated row once", len(got))
	}
}

func TestAMissingStreamCountsAFailureAndNotifyStillReturnsAtOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	var logs logCapture
	n := newNotifier(t, js, notify.Options{Timeout: time.Second, Logger: logs.logger()})
	const rows = 3
	for i := range rows {
		notifyTimed(t, n, completedRow(i))
	}
	waitUntil(t, "the failures to be counted", func() bool { return n.Counts().Failed == rows })
	if c := n.Counts(); c.Published != 0 || c.Dropped != 0 {
		t.Errorf("counts %+v, want only failures", c)
	}
	lines := logs.lines(t)
	if len(lines) != rows {
		t.Fatalf("%d log lines, want one per failure: %s", len(lines), logs.text())
	}
	for _, line := range lines {
		keys := make([]string, 0, len(line))
		for k := range line {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"error", "event_id", "level", "msg", "reason", "time", "tool"}; !slices.Equal(keys, want) {
			t.Errorf("a failure line has the keys %v, want %v", keys, want)
		}
		if line["reason"] != notify.ReasonPublishFailed || line["tool"] != completedRow(0).GetTool() || line["error"] == "" {
			t.Errorf("a failure line does not say which row failed and why: %v", line)
		}
	}
	if strings.Contains(logs.text(), secret) {
		t.Error("a log line shows a value of the row")
	}
}

func TestAFullQueueDropsAndCountsWithoutWaiting(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createNotifyStream(t, js)
	// With the server gone the publisher waits out its timeout on the first
	// row, so the queue behind it fills.
	srv.Stop()
	var logs logCapture
	n := notify.New(js, notify.Options{QueueSize: 1, Timeout: waitBound, Logger: logs.logger()})
	const rows = 10
	for i := range rows {
		notifyTimed(t, n, completedRow(i))
	}
	// One row may be with the publisher and one in the queue; every other
	// was dropped at once.
	if c := n.Counts(); c.Dropped < rows-2 || c.Published != 0 {
		t.Errorf("counts %+v, want at least %d dropped and none published", c, rows-2)
	}
	full := 0
	for _, line := range logs.lines(t) {
		if line["reason"] == notify.ReasonQueueFull {
			full++
		}
	}
	if full < rows-2 {
		t.Errorf("%d rows logged as dropped for a full queue, want at least %d", full, rows-2)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := n.Close(ctx)
	if took := time.Since(start); took > waitBound/2 {
		t.Errorf("Close took %v; its context did not bound it", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not published") {
		t.Errorf("Close = %v, want it to say rows were cut off by its deadline", err)
	}
	if c := n.Counts(); c.Published+c.Failed+c.Dropped != rows || c.Published != 0 {
		t.Errorf("counts %+v after Close, want all %d rows accounted for and none published", c, rows)
	}
}

func TestCloseFlushesTheQueue(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createNotifyStream(t, js)
	n := notify.New(js, notify.Options{QueueSize: 512})
	const rows = 200
	for i := range rows {
		notifyTimed(t, n, completedRow(i))
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if c := n.Counts(); c.Published != rows {
		t.Errorf("counts %+v after Close, want all %d published", c, rows)
	}
	if got := readStream(t, js); len(got) != rows {
		t.Errorf("the stream holds %d messages after Close, want %d", len(got), rows)
	}
	if err := n.Close(ctx); err != nil {
		t.Errorf("a second Close = %v", err)
	}
}

func TestNotifyAfterCloseIsDroppedAndCounted(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createNotifyStream(t, js)
	var logs logCapture
	n := notify.New(js, notify.Options{Logger: logs.logger()})
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	notifyTimed(t, n, completedRow(1))
	n.Notify(nil)
	if c := n.Counts(); c != (notify.Counts{Dropped: 1}) {
		t.Errorf("counts %+v, want one dropped", c)
	}
	lines := logs.lines(t)
	if len(lines) != 1 || lines[0]["reason"] != notify.ReasonClosed || lines[0]["event_id"] != completedRow(1).GetEventId() {
		t.Errorf("log lines %v, want one naming the row dropped after Close", lines)
	}
	if got := readStream(t, js); len(got) != 0 {
		t.Errorf("the stream holds %d messages, want none", len(got))
	}
}

func TestEveryRowNotifiedWhileClosingIsAccountedFor(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createNotifyStream(t, js)
	n := notify.New(js, notify.Options{QueueSize: 16})
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				e := completedRow(i)
				e.EventId = fmt.Sprintf("0190-w%d-%04d", w, i)
				n.Notify(e)
			}
		})
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	c := n.Counts()
	if total := c.Published + c.Failed + c.Dropped; total != writers*each {
		t.Errorf("counts %+v add up to %d, want %d", c, total, writers*each)
	}
	if c.Failed != 0 {
		t.Errorf("%d rows failed with the stream up", c.Failed)
	}
	if got := uint64(len(readStream(t, js))); got != c.Published {
		t.Errorf("the stream holds %d rows, %d were counted published", got, c.Published)
	}
}
