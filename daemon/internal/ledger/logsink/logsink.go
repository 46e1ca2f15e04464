package logsink

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/garm-dev/garm/daemon/internal/ledger"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// Message is the message of every ledger log line.
const Message = "garm.ledger"

// Attributes a fallen-back row carries after its columns.
const (
	// FallbackKey is true on a row that was meant for another recorder and
	// reached the log instead.
	FallbackKey = "fallback"
	// FallbackReasonKey says why the row fell back, in the words of the
	// recorder that let it fall.
	FallbackReasonKey = "fallback_reason"
)

// ErrInfoDisabled is returned for a row logged through a logger that discards
// info lines: the row is not written anywhere.
var ErrInfoDisabled = errors.New("logsink: the logger discards info lines, so the ledger row was not written")

// Recorder writes every row as one log line.
type Recorder struct {
	logger *slog.Logger
	counts ledger.Counts
}

// New is a Recorder writing through logger. It panics on a nil logger: a
// library logs only through a logger it was given.
func New(logger *slog.Logger) *Recorder {
	if logger == nil {
		panic("logsink: New needs a logger")
	}
	return &Recorder{logger: logger}
}

// Record logs e. A nil e is not a row and is ignored.
func (r *Recorder) Record(e *ledgerv1.Event) {
	if e == nil {
		return
	}
	if err := logRow(context.Background(), r.logger, e); err != nil {
		r.counts.Lost.Add(1)
		return
	}
	r.counts.Recorded.Add(1)
}

// RecordContext is Record with the call's context, handed to the log
// handler.
func (r *Recorder) RecordContext(ctx context.Context, e *ledgerv1.Event) {
	if e == nil {
		return
	}
	if err := logRow(ctx, r.logger, e); err != nil {
		r.counts.Lost.Add(1)
		return
	}
	r.counts.Recorded.Add(1)
}

// Close has nothing to flush: every row was written when it was recorded.
func (r *Recorder) Close(context.Context) error { return nil }

// Counts are the rows logged (Recorded) and the rows the logger would not
// take (Lost). Nothing falls back from the last resort.
func (r *Recorder) Counts() *ledger.Counts { return &r.counts }

// LogRow writes e as one Message line at info level through logger. The
// error is ErrInfoDisabled, or the handler's own when it fails to write; the
// row is then not in the log.
func LogRow(logger *slog.Logger, e *ledgerv1.Event) error {
	return logRow(context.Background(), logger, e)
}

// LogFallbackRow writes e as LogRow does, followed by FallbackKey=true and
// FallbackReasonKey=reason.
func LogFallbackRow(logger *slog.Logger, e *ledgerv1.Event, reason string) error {
	return logRow(context.Background(), logger, e, slog.Bool(FallbackKey, true), slog.String(FallbackReasonKey, reason))
}

// logRow builds the record by hand rather than through logger.LogAttrs so the
// handler's error is seen, and with a zero record time so that a handler
// writes no time of its own: the row's time column is the line's only time.
func logRow(ctx context.Context, logger *slog.Logger, e *ledgerv1.Event, extra ...slog.Attr) error {
	h := logger.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return ErrInfoDisabled
	}
	rec := slog.NewRecord(time.Time{}, slog.LevelInfo, Message, 0)
	cols := columns(e)
	rec.AddAttrs(cols[:]...)
	rec.AddAttrs(extra...)
	return h.Handle(ctx, rec)
}

// columnCount is the number of columns of a ledger row.
const columnCount = 37

// columns are e's columns in field-number order. A map and a list are always
// given as values, never nil, and tags is a map rather than a group because
// handlers drop empty groups: an empty column stays on the line.
func columns(e *ledgerv1.Event) [columnCount]slog.Attr {
	return [columnCount]slog.Attr{
		slog.String("event_id", e.GetEventId()),
		slog.String("time", rowTime(e)),
		slog.String("tenant", e.GetTenant()),
		slog.String("app", e.GetApp()),
		slog.String("feature", e.GetFeature()),
		slog.String("run_id", e.GetRunId()),
		slog.String("correlation_id", e.GetCorrelationId()),
		slog.String("causation_id", e.GetCausationId()),
		slog.String("budget_id", e.GetBudgetId()),
		slog.Any("tags", tags(e)),
		slog.Float64("latency_ms", e.GetLatencyMs()),
		slog.String("outcome", e.GetOutcome()),
		slog.String("error_kind", e.GetErrorKind()),
		slog.String("tool", e.GetTool()),
		slog.String("principal_subject", e.GetPrincipalSubject()),
		slog.String("principal_actor", e.GetPrincipalActor()),
		slog.String("principal_kind", e.GetPrincipalKind()),
		slog.Uint64("chain_depth", uint64(e.GetChainDepth())),
		slog.String("clearance_effective", e.GetClearanceEffective()),
		slog.Any("compartments_effective", compartments(e)),
		slog.String("redaction_plan", e.GetRedactionPlan()),
		slog.Uint64("redaction_count", uint64(e.GetRedactionCount())),
		slog.Uint64("disclosed_count", uint64(e.GetDisclosedCount())),
		slog.String("error_detail", e.GetErrorDetail()),
		slog.String("execution_subject", e.GetExecutionSubject()),
		slog.String("catalogue_digest", e.GetCatalogueDigest()),
		slog.String("daemon_version", e.GetDaemonVersion()),
		slog.String("method", e.GetMethod()),
		slog.String("surface", e.GetSurface()),
		slog.String("client_name", e.GetClientName()),
		slog.String("instance_rule", e.GetInstanceRule()),
		slog.Uint64("rows_filtered", uint64(e.GetRowsFiltered())),
		slog.Any("filters_applied", orEmpty(e.GetFiltersApplied())),
		slog.Any("audit_only_verdicts", orEmpty(e.GetAuditOnlyVerdicts())),
		slog.String("rule_error_class", e.GetRuleErrorClass()),
		slog.String("limit_id", e.GetLimitId()),
		slog.String("limit_key", e.GetLimitKey()),
	}
}

// rowTime is the row's time in RFC 3339 with nanoseconds, in UTC; empty when
// the row has none.
func rowTime(e *ledgerv1.Event) string {
	ts := e.GetTime()
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format(time.RFC3339Nano)
}

var (
	noTags         = map[string]string{}
	noCompartments = []string{}
)

func tags(e *ledgerv1.Event) map[string]string {
	if t := e.GetTags(); t != nil {
		return t
	}
	return noTags
}

// orEmpty is list, or an empty list for nil: an empty column stays on the
// line.
func orEmpty(list []string) []string {
	if list == nil {
		return noCompartments
	}
	return list
}

func compartments(e *ledgerv1.Event) []string {
	if c := e.GetCompartmentsEffective(); c != nil {
		return c
	}
	return noCompartments
}

var (
	_ ledger.Recorder        = (*Recorder)(nil)
	_ ledger.ContextRecorder = (*Recorder)(nil)
)

var _ ledger.ContextRecorder = (*Recorder)(nil)
