package jetstream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/proto"
)

func TestAWriteLandsOnItsTenantsSubjectWithTheEventIdAndOutcomeAsMsgId(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	sink := auditjs.New(js, auditjs.Options{})
	e := auditRow("0190-intent-lands", "intent")
	e.Tenant = "globex.eu" // a dot must not split the tenant's token
	if err := sink.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	got := readStream(t, js)
	if len(got) != 1 {
		t.Fatalf("the stream holds %d messages, want 1", len(got))
	}
	if want := wire.AuditSubject("globex.eu", "garmd"); got[0].subject != want {
		t.Errorf("subject %q, want %q", got[0].subject, want)
	}
	if want := "0190-intent-lands.intent"; got[0].msgID != want {
		t.Errorf("Nats-Msg-Id %q, want %q", got[0].msgID, want)
	}
	if !proto.Equal(got[0].row, e) {
		t.Errorf("the stored row is\n%v\nwant\n%v", got[0].row, e)
	}
}

func TestTheSameEventIdAndOutcomeWrittenTwiceIsStoredOnce(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	sink := auditjs.New(js, auditjs.Options{})
	for range 2 {
		if err := sink.Write(t.Context(), auditRow("0190-retried", "ok")); err != nil {
			t.Fatalf("a repeated write failed; a duplicate acknowledgement is a success: %v", err)
		}
	}
	if got := readStream(t, js); len(got) != 1 {
		t.Errorf("the stream holds %d messages, want the repeated row once", len(got))
	}
}

func TestTheIntentAndOutcomeOfOneEventAreTwoMessages(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	sink := auditjs.New(js, auditjs.Options{})
	// The chain writes the open row ahead of the call, then completes the
	// same row and writes it again.
	e := auditRow("0190-two-rows", "intent")
	if err := sink.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	e.Outcome = "ok"
	e.LatencyMs = 12.5
	if err := sink.Write(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	got := readStream(t, js)
	if len(got) != 2 {
		t.Fatalf("the stream holds %d messages, want the intent and the outcome", len(got))
	}
	for i, want := range []string{"intent", "ok"} {
		if got[i].row.GetOutcome() != want || got[i].msgID != "0190-two-rows."+want {
			t.Errorf("message %d is %s with id %q, want %s", i, got[i].row.GetOutcome(), got[i].msgID, want)
		}
	}
	if got[0].row.GetLatencyMs() != 0 {
		t.Error("the intent row changed after it was written")
	}
}

func TestAWriteToADeletedStreamFailsWithinTheTimeout(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	if err := js.DeleteStream(ctx, wire.AuditStream); err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	sink := auditjs.New(js, auditjs.Options{Timeout: timeout})
	start := time.Now()
	err := sink.Write(t.Context(), auditRow("0190-no-stream", "intent"))
	took := time.Since(start)
	if err == nil {
		t.Fatal("a write with no stream succeeded")
	}
	if took > timeout+time.Second {
		t.Errorf("the write failed after %v, past its timeout %v", took, timeout)
	}
}

func TestAWriteToAServerThatIsGoneFailsAtItsTimeout(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createStream(t, js, auditStream())
	srv.Stop()
	const timeout = 300 * time.Millisecond
	sink := auditjs.New(js, auditjs.Options{Timeout: timeout})
	start := time.Now()
	err := sink.Write(t.Context(), auditRow("0190-server-gone", "intent"))
	took := time.Since(start)
	if err == nil {
		t.Fatal("a write with no server succeeded")
	}
	if took > timeout+2*time.Second {
		t.Errorf("the write failed after %v, well past its timeout %v", took, timeout)
	}
}

func TestTheCallersContextEndsAWriteSoonerThanTheTimeout(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	js := connect(t, srv)
	createStream(t, js, auditStream())
	srv.Stop()
	sink := auditjs.New(js, auditjs.Options{Timeout: waitBound})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := sink.Write(ctx, auditRow("0190-caller-gone", "intent"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Write = %v, want the caller's deadline", err)
	}
	if took := time.Since(start); took > waitBound/2 {
		t.Errorf("the write took %v; the caller's context did not bound it", took)
	}
}

func TestARowThatCannotBeToldApartIsRefusedUnwritten(t *testing.T) {
	js := connect(t, garmtooltest.StartJetStream(t))
	createStream(t, js, auditStream())
	sink := auditjs.New(js, auditjs.Options{})
	for name, e := range map[string]*ledgerv1.Event{
		"nil":           nil,
		"no event id":   auditRow("", "intent"),
		"no outcome":    auditRow("0190-no-outcome", ""),
		"not marshaled": auditRow("0190-bad-utf8", "intent\xff"),
	} {
		if err := sink.Write(t.Context(), e); err == nil {
			t.Errorf("%s: Write succeeded", name)
		}
	}
	if got := readStream(t, js); len(got) != 0 {
		t.Errorf("the stream holds %d messages, want none", len(got))
	}
}
