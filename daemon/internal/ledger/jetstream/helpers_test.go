package jetstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	"github.com/garm-dev/garm/daemon/internal/ledger/logsink"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 20 * time.Second

// connect is a client of srv that reconnects, closed when the test ends.
func connect(t testing.TB, srv *garmtooltest.Server) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return garmtooltest.ConnectJetStream(t, srv.URL())
}

func createLedgerStream(t testing.TB, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     wire.LedgerStream,
		Subjects: []string{wire.LedgerStreamSubjects},
		Storage:  jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
}

func newRecorder(t testing.TB, js jetstream.JetStream, o ledgerjs.Options) *ledgerjs.Recorder {
	t.Helper()
	r, err := ledgerjs.New(js, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitBound)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

// storedBatch is one message of the ledger stream, decoded.
type storedBatch struct {
	subject string
	msgID   string
	size    int
	rows    []*ledgerv1.Event
}

// readStream is every message of the ledger stream, in stream order.
func readStream(t testing.TB, js jetstream.JetStream) []storedBatch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := js.Stream(ctx, wire.LedgerStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedBatch
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var b ledgerv1.Batch
		if err := proto.Unmarshal(msg.Data, &b); err != nil {
			t.Fatalf("message %d of the ledger stream is not a Batch: %v", seq, err)
		}
		out = append(out, storedBatch{subject: msg.Subject, msgID: msg.Header.Get(jetstream.MsgIDHeader), size: len(msg.Data), rows: b.GetEvents()})
	}
	return out
}

// streamMsgs is how many messages the ledger stream holds.
func streamMsgs(t testing.TB, js jetstream.JetStream) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	stream, err := js.Stream(ctx, wire.LedgerStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
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

func (c *logCapture) lines(t testing.TB) []map[string]any {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(c.buf.String()), "\n") {
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

// rows are the ledger lines, by event id.
func (c *logCapture) rows(t testing.TB) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, line := range c.lines(t) {
		if line["msg"] != logsink.Message {
			continue
		}
		id, _ := line["event_id"].(string)
		if _, dup := out[id]; dup {
			t.Errorf("the row %s was logged twice", id)
		}
		out[id] = line
	}
	return out
}

// assertFallbackLine checks that line is e's ledger line, every column
// included, marked as fallen back for reason.
func assertFallbackLine(t testing.TB, line map[string]any, e *ledgerv1.Event, reason string) {
	t.Helper()
	want := wantColumns(e)
	want["level"] = "INFO"
	want["msg"] = logsink.Message
	want[logsink.FallbackKey] = true
	want[logsink.FallbackReasonKey] = reason
	if !reflect.DeepEqual(line, want) {
		t.Errorf("the fallback line of %s is\n%v\nwant\n%v", e.GetEventId(), line, want)
	}
}

// wantColumns is what a JSON ledger line holds for e, written out here
// rather than taken from logsink so that a column it drops shows.
func wantColumns(e *ledgerv1.Event) map[string]any {
	tags := map[string]any{}
	for k, v := range e.GetTags() {
		tags[k] = v
	}
	anyList := func(list []string) []any {
		out := []any{}
		for _, s := range list {
			out = append(out, s)
		}
		return out
	}
	compartments := anyList(e.GetCompartmentsEffective())
	return map[string]any{
		"event_id": e.GetEventId(), "time": e.GetTime().AsTime().UTC().Format(time.RFC3339Nano),
		"tenant": e.GetTenant(), "app": e.GetApp(), "feature": e.GetFeature(), "run_id": e.GetRunId(),
		"correlation_id": e.GetCorrelationId(), "causation_id": e.GetCausationId(),
		"budget_id": e.GetBudgetId(), "tags": tags, "latency_ms": e.GetLatencyMs(),
		"outcome": e.GetOutcome(), "error_kind": e.GetErrorKind(), "tool": e.GetTool(),
		"principal_subject": e.GetPrincipalSubject(), "principal_actor": e.GetPrincipalActor(),
		"principal_kind": e.GetPrincipalKind(), "chain_depth": float64(e.GetChainDepth()),
		"clearance_effective": e.GetClearanceEffective(), "compartments_effective": compartments,
		"redaction_plan": e.GetRedactionPlan(), "redaction_count": float64(e.GetRedactionCount()),
		"disclosed_count": float64(e.GetDisclosedCount()), "error_detail": e.GetErrorDetail(),
		"execution_subject": e.GetExecutionSubject(), "catalogue_digest": e.GetCatalogueDigest(),
		"daemon_version": e.GetDaemonVersion(), "method": e.GetMethod(),
		"surface": e.GetSurface(), "client_name": e.GetClientName(),
		"instance_rule": e.GetInstanceRule(), "rows_filtered": float64(e.GetRowsFiltered()),
		"filters_applied": anyList(e.GetFiltersApplied()), "audit_only_verdicts": anyList(e.GetAuditOnlyVerdicts()),
		"rule_error_class": e.GetRuleErrorClass(),
		"limit_id":         e.GetLimitId(), "limit_key": e.GetLimitKey(),
	}
}

// row is a ledger row with every column set.
func row(tenant string, n int) *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId:               fmt.Sprintf("%s-%06d", tenant, n),
		Time:                  timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, n, time.UTC)),
		Tenant:                tenant,
		App:                   "garmd",
		Feature:               "invoices",
		RunId:                 "run-1",
		CorrelationId:         "corr-1",
		CausationId:           "cause-1",
		BudgetId:              "budget-1",
		Tags:                  map[string]string{"task_id": "t-9"},
		LatencyMs:             1.25,
		Outcome:               "ok",
		ErrorKind:             "",
		Tool:                  "payments.v1.Payments.Pay",
		PrincipalSubject:      "user:alice",
		PrincipalActor:        "agent:helper",
		PrincipalKind:         "PRINCIPAL_KIND_HUMAN",
		ChainDepth:            2,
		ClearanceEffective:    "CLEARANCE_CONFIDENTIAL",
		CompartmentsEffective: []string{"finance"},
		RedactionPlan:         "0123456789abcdef",
		RedactionCount:        1,
		DisclosedCount:        1,
		ErrorDetail:           "",
		ExecutionSubject:      "runner:ci",
		CatalogueDigest:       "sha256:feed",
		DaemonVersion:         "v0.1.0",
		Method:                "/payments.v1.Payments/Pay",
		Surface:               "mcp",
		ClientName:            "claude-code",
	}
}

// assertEveryRowIsSomewhere checks that each of want is in the stream or in
// the log, and that the counts add up to them.
func assertEveryRowIsSomewhere(t testing.TB, r *ledgerjs.Recorder, want []*ledgerv1.Event, stream []storedBatch, logged map[string]map[string]any) {
	t.Helper()
	inStream := map[string]bool{}
	for _, b := range stream {
		for _, e := range b.rows {
			inStream[e.GetEventId()] = true
		}
	}
	for _, e := range want {
		if !inStream[e.GetEventId()] && logged[e.GetEventId()] == nil {
			t.Errorf("the row %s is neither in the stream nor in the log", e.GetEventId())
		}
	}
	c := r.Counts()
	if got := c.Recorded.Load() + c.FellBack.Load(); got != uint64(len(want)) {
		t.Errorf("recorded %d + fell back %d = %d, want %d", c.Recorded.Load(), c.FellBack.Load(), got, len(want))
	}
	if c.Lost.Load() != 0 {
		t.Errorf("lost %d rows", c.Lost.Load())
	}
	if n := uint64(len(inStream)); n < c.Recorded.Load() {
		t.Errorf("the stream holds %d rows but %d were acknowledged", n, c.Recorded.Load())
	}
}
