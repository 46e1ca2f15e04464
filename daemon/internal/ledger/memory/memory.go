package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/garm-dev/garm/daemon/internal/ledger"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/proto"
)

// Recorder keeps every row it is given, in the order Record was called.
type Recorder struct {
	mu   sync.Mutex
	rows []*ledgerv1.Event
	// grew is closed, and replaced, whenever a row arrives.
	grew   chan struct{}
	counts ledger.Counts
}

// New is an empty Recorder.
func New() *Recorder { return &Recorder{grew: make(chan struct{})} }

// Record keeps e. A nil e is not a row and is ignored.
func (r *Recorder) Record(e *ledgerv1.Event) {
	if e == nil {
		return
	}
	r.mu.Lock()
	r.rows = append(r.rows, e)
	close(r.grew)
	r.grew = make(chan struct{})
	r.mu.Unlock()
	r.counts.Recorded.Add(1)
}

// Close has nothing to flush; rows recorded afterwards are kept too.
func (r *Recorder) Close(context.Context) error { return nil }

// Counts counts every kept row as Recorded.
func (r *Recorder) Counts() *ledger.Counts { return &r.counts }

// Rows are copies of the rows kept so far, in order.
func (r *Recorder) Rows() []*ledgerv1.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneRows(r.rows)
}

// WaitFor waits until at least n rows are kept and returns copies of all of
// them, or returns ctx's error with how many had arrived.
func (r *Recorder) WaitFor(ctx context.Context, n int) ([]*ledgerv1.Event, error) {
	for {
		r.mu.Lock()
		if len(r.rows) >= n {
			rows := cloneRows(r.rows)
			r.mu.Unlock()
			return rows, nil
		}
		have, grew := len(r.rows), r.grew
		r.mu.Unlock()
		select {
		case <-grew:
		case <-ctx.Done():
			return nil, fmt.Errorf("memory: %d of %d ledger rows recorded: %w", have, n, ctx.Err())
		}
	}
}

// Reset forgets every row kept so far; Counts keep counting.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = nil
}

func cloneRows(rows []*ledgerv1.Event) []*ledgerv1.Event {
	out := make([]*ledgerv1.Event, len(rows))
	for i, e := range rows {
		out[i] = proto.CloneOf(e)
	}
	return out
}

var _ ledger.Recorder = (*Recorder)(nil)
