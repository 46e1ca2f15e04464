package logsink_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/ledger/logsink"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// lockedBuffer is a bytes.Buffer a handler may write to from any goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.buf.String()), "\n") {
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

func jsonLogger(w *lockedBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, nil))
}

func fullRow() *ledgerv1.Event {
	return &ledgerv1.Event{
		EventId:               "01J9ZQ4V7K8M2N3P4Q5R6S7T8V",
		Time:                  timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))),
		Tenant:                "acme",
		App:                   "garmd",
		Feature:               "invoices",
		RunId:                 "run-1",
		CorrelationId:         "corr-1",
		CausationId:           "cause-1",
		BudgetId:              "budget-1",
		Tags:                  map[string]string{"task_id": "t-9", "team": "billing"},
		LatencyMs:             12.5,
		Outcome:               "error",
		ErrorKind:             "tool_refused",
		Tool:                  "payments.v1.Payments.Pay",
		PrincipalSubject:      "user:alice",
		PrincipalActor:        "agent:helper",
		PrincipalKind:         "PRINCIPAL_KIND_HUMAN",
		ChainDepth:            2,
		ClearanceEffective:    "CLEARANCE_CONFIDENTIAL",
		CompartmentsEffective: []string{"finance", "hr"},
		RedactionPlan:         "0123456789abcdef",
		RedactionCount:        3,
		DisclosedCount:        1,
		ErrorDetail:           "the tool said no",
		ExecutionSubject:      "runner:ci",
		CatalogueDigest:       "sha256:feed",
		DaemonVersion:         "v0.1.0",
		Method:                "/payments.v1.Payments/Pay",
		Surface:               "mcp",
		ClientName:            "claude-code",
		InstanceRule:          "own_customer",
		RowsFiltered:          2,
		FiltersApplied:        []string{"own_accounts"},
		AuditOnlyVerdicts:     []string{"require:cap"},
		RuleErrorClass:        "absent_attribute",
		LimitId:               "per_agent",
		LimitKey:              "tenant+agent",
	}
}

// wantColumns is what a JSON line must hold for e, written out independently
// of the package so a column it drops or misnames shows here.
func wantColumns(e *ledgerv1.Event) map[string]any {
	ts := ""
	if e.GetTime() != nil {
		ts = e.GetTime().AsTime().UTC().Format(time.RFC3339Nano)
	}
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
		"event_id": e.GetEventId(), "time": ts, "tenant": e.GetTenant(), "app": e.GetApp(),
		"feature": e.GetFeature(), "run_id": e.GetRunId(), "correlation_id": e.GetCorrelationId(),
		"causation_id": e.GetCausationId(), "budget_id": e.GetBudgetId(), "tags": tags,
		"latency_ms": e.GetLatencyMs(), "outcome": e.GetOutcome(), "error_kind": e.GetErrorKind(),
		"tool": e.GetTool(), "principal_subject": e.GetPrincipalSubject(),
		"principal_actor": e.GetPrincipalActor(), "principal_kind": e.GetPrincipalKind(),
		"chain_depth": float64(e.GetChainDepth()), "clearance_effective": e.GetClearanceEffective(),
		"compartments_effective": compartments, "redaction_plan": e.GetRedactionPlan(),
		"redaction_count": float64(e.GetRedactionCount()), "disclosed_count": float64(e.GetDisclosedCount()),
		"error_detail": e.GetErrorDetail(), "execution_subject": e.GetExecutionSubject(),
		"catalogue_digest": e.GetCatalogueDigest(), "daemon_version": e.GetDaemonVersion(),
		"method": e.GetMethod(), "surface": e.GetSurface(), "client_name": e.GetClientName(),
		"instance_rule": e.GetInstanceRule(), "rows_filtered": float64(e.GetRowsFiltered()),
		"filters_applied": anyList(e.GetFiltersApplied()), "audit_only_verdicts": anyList(e.GetAuditOnlyVerdicts()),
		"rule_error_class": e.GetRuleErrorClass(),
		"limit_id":         e.GetLimitId(), "limit_key": e.GetLimitKey(),
	}
}

// assertRowLine checks that line is the ledger line of e, with extra as its
// only further attributes.
func assertRowLine(t *testing.T, line map[string]any, e *ledgerv1.Event, extra map[string]any) {
	t.Helper()
	want := wantColumns(e)
	want["level"] = "INFO"
	want["msg"] = logsink.Message
	for k, v := range extra {
		want[k] = v
	}
	if !reflect.DeepEqual(line, want) {
		t.Errorf("the line is\n%v\nwant\n%v", line, want)
	}
}

func TestEveryColumnIsOnTheLineNamedAsItsProtoField(t *testing.T) {
	var buf lockedBuffer
	e := fullRow()
	if err := logsink.LogRow(jsonLogger(&buf), e); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines(t)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1", len(lines))
	}
	assertRowLine(t, lines[0], e, nil)

	fields := e.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		name := string(fields.Get(i).Name())
		if _, ok := lines[0][name]; !ok {
			t.Errorf("the proto field %s has no attribute on the line", name)
		}
	}
	if got, want := len(lines[0])-2, fields.Len(); got != want {
		t.Errorf("the line has %d column attributes, the row has %d fields", got, want)
	}
}

func TestAnEmptyRowHasTheSameShapeAsAFullOne(t *testing.T) {
	var buf lockedBuffer
	logger := jsonLogger(&buf)
	if err := logsink.LogRow(logger, fullRow()); err != nil {
		t.Fatal(err)
	}
	empty := &ledgerv1.Event{}
	if err := logsink.LogRow(logger, empty); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	assertRowLine(t, lines[1], empty, nil)
	full, none := slices.Sorted(maps.Keys(lines[0])), slices.Sorted(maps.Keys(lines[1]))
	if !slices.Equal(full, none) {
		t.Errorf("an empty row logs keys %v, a full one %v", none, full)
	}
}

func TestTheRowTimeIsTheLinesOnlyTime(t *testing.T) {
	for name, newHandler := range map[string]func(*lockedBuffer) slog.Handler{
		"json": func(w *lockedBuffer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		"text": func(w *lockedBuffer) slog.Handler { return slog.NewTextHandler(w, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			var buf lockedBuffer
			if err := logsink.LogRow(slog.New(newHandler(&buf)), fullRow()); err != nil {
				t.Fatal(err)
			}
			line := buf.buf.String()
			if n := strings.Count(line, "time"); n != 1 {
				t.Errorf("the line names a time %d times, want once: %s", n, line)
			}
			if !strings.Contains(line, "2026-03-04T04:06:07.123456789Z") {
				t.Errorf("the line does not hold the row time in RFC 3339 nano UTC: %s", line)
			}
		})
	}
}

func TestAFallenBackRowCarriesTheFallbackAttributesAfterItsColumns(t *testing.T) {
	var buf lockedBuffer
	e := fullRow()
	if err := logsink.LogFallbackRow(jsonLogger(&buf), e, "buffer_full"); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines(t)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1", len(lines))
	}
	assertRowLine(t, lines[0], e, map[string]any{logsink.FallbackKey: true, logsink.FallbackReasonKey: "buffer_full"})
}

func TestTheLoggersOwnAttributesStayOnTheLine(t *testing.T) {
	var buf lockedBuffer
	e := fullRow()
	if err := logsink.LogRow(jsonLogger(&buf).With("component", "garmd"), e); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines(t)
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1", len(lines))
	}
	assertRowLine(t, lines[0], e, map[string]any{"component": "garmd"})
}

func TestTheRecorderLogsAndCountsEveryRow(t *testing.T) {
	var buf lockedBuffer
	r := logsink.New(jsonLogger(&buf))
	rows := []*ledgerv1.Event{fullRow(), {EventId: "second"}, {EventId: "third", Outcome: "ok"}}
	for _, e := range rows {
		r.Record(e)
	}
	r.Record(nil)
	if err := r.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := buf.lines(t)
	if len(lines) != len(rows) {
		t.Fatalf("%d lines, want %d", len(lines), len(rows))
	}
	for i, e := range rows {
		assertRowLine(t, lines[i], e, nil)
	}
	c := r.Counts()
	if c.Recorded.Load() != 3 || c.FellBack.Load() != 0 || c.Lost.Load() != 0 {
		t.Errorf("counts recorded=%d fellback=%d lost=%d, want 3 0 0", c.Recorded.Load(), c.FellBack.Load(), c.Lost.Load())
	}
}

func TestALoggerThatDiscardsInfoLosesTheRowAndSaysSo(t *testing.T) {
	var buf lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := logsink.LogRow(logger, fullRow()); err != logsink.ErrInfoDisabled {
		t.Errorf("LogRow = %v, want ErrInfoDisabled", err)
	}
	r := logsink.New(logger)
	r.Record(fullRow())
	if got := r.Counts().Lost.Load(); got != 1 {
		t.Errorf("lost %d rows, want 1", got)
	}
	if got := r.Counts().Recorded.Load(); got != 0 {
		t.Errorf("recorded %d rows, want 0", got)
	}
	if buf.buf.Len() != 0 {
		t.Errorf("something was logged: %s", buf.buf.String())
	}
}

func TestAHandlerThatCannotWriteLosesTheRow(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "ledger.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewJSONHandler(f, nil))
	if err := logsink.LogRow(logger, fullRow()); err == nil {
		t.Error("LogRow to a closed file succeeded")
	}
	r := logsink.New(logger)
	r.Record(fullRow())
	if got := r.Counts().Lost.Load(); got != 1 {
		t.Errorf("lost %d rows, want 1", got)
	}
}
