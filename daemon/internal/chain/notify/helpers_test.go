package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 20 * time.Second

// immediate is how long a Notify may take and still be called immediate: a
// channel send, with room for a loaded machine running the race detector.
const immediate = 100 * time.Millisecond

// connect is a JetStream client of srv that reconnects, closed when the
// test ends.
func connect(t testing.TB, srv *garmtooltest.Server) jetstream.JetStream {
	t.Helper()
	_, js := garmtooltest.ConnectJetStream(t, srv.URL())
	return js
}

func createNotifyStream(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     wire.NotifyStream,
		Subjects: []string{wire.NotifyStreamSubjects},
		Storage:  jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
}

// newNotifier is a Notifier closed when the test ends, with a bounded wait.
func newNotifier(t testing.TB, js jetstream.JetStream, o notify.Options) *notify.Notifier {
	t.Helper()
	n := notify.New(js, o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		_ = n.Close(ctx)
	})
	return n
}

// stored is one message of the notify stream, decoded.
type stored struct {
	subject string
	msgID   string
	row     *ledgerv1.Event
}

// readStream is every message of the notify stream, in stream order.
func readStream(t testing.TB, js jetstream.JetStream) []stored {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := js.Stream(ctx, wire.NotifyStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []stored
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var e ledgerv1.Event
		if err := proto.Unmarshal(msg.Data, &e); err != nil {
			t.Fatalf("message %d of the notify stream is not an Event: %v", seq, err)
		}
		out = append(out, stored{subject: msg.Subject, msgID: msg.Header.Get(jetstream.MsgIDHeader), row: &e})
	}
	return out
}

// waitUntil polls cond until it holds, failing the test after waitBound.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting after %v for %s", waitBound, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// notifyTimed calls Notify and fails the test when it was not immediate.
func notifyTimed(t testing.TB, n *notify.Notifier, e *ledgerv1.Event) {
	t.Helper()
	start := time.Now()
	n.Notify(e)
	if took := time.Since(start); took > immediate {
		t.Errorf("Notify of %s took %v; it must never wait", e.GetEventId(), took)
	}
}

// secret is a value a row carries that no log line may show.
const secret = "4111-1111-1111-1111"

// completedRow is a row as step 9 completes it, a value in its free-text
// column.
func completedRow(n int) *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId:          fmt.Sprintf("0190-notify-%04d", n),
		Time:             timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, n, time.UTC)),
		Tenant:           "acme",
		App:              "garmd",
		Tags:             map[string]string{"task_id": "t-9"},
		LatencyMs:        3.5,
		Outcome:          "ok",
		Tool:             "payments.v1.Payments.Refund",
		PrincipalSubject: "user:alice",
		ErrorDetail:      "card " + secret,
		CatalogueDigest:  "sha256:feed",
		Method:           "/payments.v1.Payments/Refund",
	}
}

// logCapture is a JSON logger whose lines a test reads back.
type logCapture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *logCapture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

func (c *logCapture) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(c, nil)) }

func (c *logCapture) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

func (c *logCapture) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(c.text()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %v: %s", err, line)
		}
		out = append(out, m)
	}
	return out
}
