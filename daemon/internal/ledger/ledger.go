package ledger

import (
	"context"
	"sync/atomic"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// Recorder records completed ledger rows.
type Recorder interface {
	// Record takes ownership of a completed row. It never blocks on I/O and
	// never fails the call; the row must not be changed afterwards.
	Record(e *ledgerv1.Event)
	// Close records whatever is buffered, waiting at most until ctx is done,
	// and refuses nothing afterwards: rows recorded after Close take the
	// recorder's fallback path.
	Close(ctx context.Context) error
	// Counts are the recorder's counters, read by metrics.
	Counts() *Counts
}

// ContextRecorder is a Recorder that also takes the call's context: one
// that writes a log line hands it to the handler, so the line carries the
// call's trace_id and span_id (docs/decisions/0060).
type ContextRecorder interface {
	RecordContext(ctx context.Context, e *ledgerv1.Event)
}

// Counts are what a recorder reports to metrics: rows recorded where they
// were meant to go, and rows that took the fallback path (or were lost, when
// even that failed).
type Counts struct {
	Recorded atomic.Uint64
	FellBack atomic.Uint64
	Lost     atomic.Uint64
}
