package memory

import (
	"context"
	"errors"
	"sync"

	"github.com/garm-dev/garm/daemon/internal/audit"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"google.golang.org/protobuf/proto"
)

// Sink keeps every row written while it is not failing, in the order Write
// was called.
type Sink struct {
	mu   sync.Mutex
	rows []*ledgerv1.Event
	fail error
}

// New is an empty Sink that accepts every write.
func New() *Sink { return &Sink{} }

// Write keeps a copy of e, or returns the error Fail set, or ctx's error
// when ctx is already done, as a sink that could not be reached in time
// would. A nil e is refused, as every Sink refuses it.
func (s *Sink) Write(ctx context.Context, e *ledgerv1.Event) error {
	if e == nil {
		return errors.New("audit/memory: Write was given no row")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.rows = append(s.rows, proto.CloneOf(e))
	return nil
}

// Fail makes every following Write return err without keeping its row;
// Fail(nil) makes writes succeed again.
func (s *Sink) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// Rows are copies of the rows kept so far, in order.
func (s *Sink) Rows() []*ledgerv1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*ledgerv1.Event, len(s.rows))
	for i, e := range s.rows {
		out[i] = proto.CloneOf(e)
	}
	return out
}

var _ audit.Sink = (*Sink)(nil)
