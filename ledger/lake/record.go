package lake

import (
	"fmt"
	"strings"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/ledger/rows"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Record is one ledger row as a row of a lake file: one column per field of
// garm.ledger.v1.Event, named as the field is, plus where the row is in the
// stream and its leaf hash. Scalars are flat columns; repeated strings are
// Parquet LISTs and tags a Parquet MAP, the types every engine reads as
// arrays and maps (decision 0129).
type Record struct {
	// Seq is the stream sequence of the Batch message holding the row and
	// BatchIndex its place in that message: the ledger's order.
	Seq        uint64 `parquet:"seq"`
	BatchIndex uint32 `parquet:"batch_index"`
	// LeafHash is the row's RFC 9162 leaf hash, 64 hex digits.
	LeafHash string `parquet:"leaf_hash"`

	EventID string     `parquet:"event_id"`
	Time    *time.Time `parquet:"time,optional,timestamp(microsecond)"`
	// TimeNanos is the nanoseconds of time's second, exactly: time is in
	// microseconds, the precision every engine reads (decision 0129).
	TimeNanos             int32             `parquet:"time_nanos"`
	Tenant                string            `parquet:"tenant,dict"`
	App                   string            `parquet:"app,dict"`
	Feature               string            `parquet:"feature,dict"`
	RunID                 string            `parquet:"run_id"`
	CorrelationID         string            `parquet:"correlation_id"`
	CausationID           string            `parquet:"causation_id"`
	BudgetID              string            `parquet:"budget_id,dict"`
	Tags                  map[string]string `parquet:"tags"`
	LatencyMS             float64           `parquet:"latency_ms"`
	Outcome               string            `parquet:"outcome,dict"`
	ErrorKind             string            `parquet:"error_kind,dict"`
	Tool                  string            `parquet:"tool,dict"`
	PrincipalSubject      string            `parquet:"principal_subject,dict"`
	PrincipalActor        string            `parquet:"principal_actor,dict"`
	PrincipalKind         string            `parquet:"principal_kind,dict"`
	ChainDepth            uint32            `parquet:"chain_depth"`
	ClearanceEffective    string            `parquet:"clearance_effective,dict"`
	CompartmentsEffective []string          `parquet:"compartments_effective,list"`
	RedactionPlan         string            `parquet:"redaction_plan,dict"`
	RedactionCount        uint32            `parquet:"redaction_count"`
	DisclosedCount        uint32            `parquet:"disclosed_count"`
	ErrorDetail           string            `parquet:"error_detail"`
	ExecutionSubject      string            `parquet:"execution_subject,dict"`
	CatalogueDigest       string            `parquet:"catalogue_digest,dict"`
	DaemonVersion         string            `parquet:"daemon_version,dict"`
	Method                string            `parquet:"method,dict"`
	Surface               string            `parquet:"surface,dict"`
	ClientName            string            `parquet:"client_name,dict"`
	InstanceRule          string            `parquet:"instance_rule,dict"`
	RowsFiltered          uint32            `parquet:"rows_filtered"`
	FiltersApplied        []string          `parquet:"filters_applied,list"`
	AuditOnlyVerdicts     []string          `parquet:"audit_only_verdicts,list"`
	RuleErrorClass        string            `parquet:"rule_error_class,dict"`
	LimitID               string            `parquet:"limit_id,dict"`
	LimitKey              string            `parquet:"limit_key,dict"`

	// UnknownFields are the row's fields this build does not know (a newer
	// garmd wrote them), as protobuf wire bytes: kept so the row still
	// hashes to its leaf. Null when there are none.
	UnknownFields []byte `parquet:"unknown_fields,optional"`
}

// FromRow is r as a lake record.
func FromRow(r rows.Row) Record {
	e := r.Event
	rec := Record{
		Seq:                   r.Seq,
		BatchIndex:            r.Index,
		LeafHash:              r.Leaf.String(),
		EventID:               e.GetEventId(),
		Tenant:                e.GetTenant(),
		App:                   e.GetApp(),
		Feature:               e.GetFeature(),
		RunID:                 e.GetRunId(),
		CorrelationID:         e.GetCorrelationId(),
		CausationID:           e.GetCausationId(),
		BudgetID:              e.GetBudgetId(),
		LatencyMS:             e.GetLatencyMs(),
		Outcome:               e.GetOutcome(),
		ErrorKind:             e.GetErrorKind(),
		Tool:                  e.GetTool(),
		PrincipalSubject:      e.GetPrincipalSubject(),
		PrincipalActor:        e.GetPrincipalActor(),
		PrincipalKind:         e.GetPrincipalKind(),
		ChainDepth:            e.GetChainDepth(),
		ClearanceEffective:    e.GetClearanceEffective(),
		CompartmentsEffective: clone(e.GetCompartmentsEffective()),
		RedactionPlan:         e.GetRedactionPlan(),
		RedactionCount:        e.GetRedactionCount(),
		DisclosedCount:        e.GetDisclosedCount(),
		ErrorDetail:           e.GetErrorDetail(),
		ExecutionSubject:      e.GetExecutionSubject(),
		CatalogueDigest:       e.GetCatalogueDigest(),
		DaemonVersion:         e.GetDaemonVersion(),
		Method:                e.GetMethod(),
		Surface:               e.GetSurface(),
		ClientName:            e.GetClientName(),
		InstanceRule:          e.GetInstanceRule(),
		RowsFiltered:          e.GetRowsFiltered(),
		FiltersApplied:        clone(e.GetFiltersApplied()),
		AuditOnlyVerdicts:     clone(e.GetAuditOnlyVerdicts()),
		RuleErrorClass:        e.GetRuleErrorClass(),
		LimitID:               e.GetLimitId(),
		LimitKey:              e.GetLimitKey(),
	}
	if ts := e.GetTime(); ts != nil {
		t := ts.AsTime().Truncate(time.Microsecond)
		rec.Time, rec.TimeNanos = &t, ts.GetNanos()
	}
	if len(e.GetTags()) > 0 {
		rec.Tags = make(map[string]string, len(e.GetTags()))
		for k, v := range e.GetTags() {
			rec.Tags[k] = v
		}
	}
	if u := e.ProtoReflect().GetUnknown(); len(u) > 0 {
		rec.UnknownFields = append([]byte(nil), u...)
	}
	return rec
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// Event rebuilds the ledger row the record was made from.
func (r *Record) Event() *ledgerv1.Event {
	e := &ledgerv1.Event{
		EventId:               r.EventID,
		Tenant:                r.Tenant,
		App:                   r.App,
		Feature:               r.Feature,
		RunId:                 r.RunID,
		CorrelationId:         r.CorrelationID,
		CausationId:           r.CausationID,
		BudgetId:              r.BudgetID,
		LatencyMs:             r.LatencyMS,
		Outcome:               r.Outcome,
		ErrorKind:             r.ErrorKind,
		Tool:                  r.Tool,
		PrincipalSubject:      r.PrincipalSubject,
		PrincipalActor:        r.PrincipalActor,
		PrincipalKind:         r.PrincipalKind,
		ChainDepth:            r.ChainDepth,
		ClearanceEffective:    r.ClearanceEffective,
		CompartmentsEffective: clone(r.CompartmentsEffective),
		RedactionPlan:         r.RedactionPlan,
		RedactionCount:        r.RedactionCount,
		DisclosedCount:        r.DisclosedCount,
		ErrorDetail:           r.ErrorDetail,
		ExecutionSubject:      r.ExecutionSubject,
		CatalogueDigest:       r.CatalogueDigest,
		DaemonVersion:         r.DaemonVersion,
		Method:                r.Method,
		Surface:               r.Surface,
		ClientName:            r.ClientName,
		InstanceRule:          r.InstanceRule,
		RowsFiltered:          r.RowsFiltered,
		FiltersApplied:        clone(r.FiltersApplied),
		AuditOnlyVerdicts:     clone(r.AuditOnlyVerdicts),
		RuleErrorClass:        r.RuleErrorClass,
		LimitId:               r.LimitID,
		LimitKey:              r.LimitKey,
	}
	if r.Time != nil {
		e.Time = &timestamppb.Timestamp{Seconds: r.Time.Unix(), Nanos: r.TimeNanos}
	}
	if len(r.Tags) > 0 {
		e.Tags = make(map[string]string, len(r.Tags))
		for k, v := range r.Tags {
			e.Tags[k] = v
		}
	}
	if len(r.UnknownFields) > 0 {
		e.ProtoReflect().SetUnknown(append([]byte(nil), r.UnknownFields...))
	}
	return e
}

// Partition is the Hive partition of a row: date=YYYY-MM-DD/app=<app>/,
// the date of the row's time in UTC (1970-01-01 for a row without one),
// the app escaped as Hive escapes a partition value.
func (r *Record) Partition() string {
	var date string
	if r.Time != nil {
		date = r.Time.UTC().Format(time.DateOnly)
	} else {
		date = time.Unix(0, 0).UTC().Format(time.DateOnly)
	}
	return "date=" + date + "/app=" + escapePartitionValue(r.App) + "/"
}

// defaultPartition is Hive's name for an empty partition value.
const defaultPartition = "__HIVE_DEFAULT_PARTITION__"

// escapePartitionValue percent-encodes every byte Hive would (anything but
// letters, digits and "-_."), so a value never makes a path separator or a
// second "=".
func escapePartitionValue(v string) string {
	if v == "" {
		return defaultPartition
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
