package natsbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/daemon/internal/transport"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// Requester sends tool calls over one NATS connection.
type Requester struct {
	nc *nats.Conn
}

// New is a Requester on nc.
func New(nc *nats.Conn) *Requester { return &Requester{nc: nc} }

// Connected reports whether the connection is up; nil when it is.
func (r *Requester) Connected() error {
	if r.nc.IsConnected() {
		return nil
	}
	return transport.ErrNotConnected
}

// Request sends req and waits for one reply until req.Deadline passes or
// ctx is done.
func (r *Requester) Request(ctx context.Context, req *transport.Request) (*transport.Reply, error) {
	// While the bus is away a request would sit in the reconnect buffer
	// until its deadline; the caller is better told at once.
	if !r.nc.IsConnected() {
		return nil, transport.ErrNotConnected
	}
	msg := &nats.Msg{
		Subject: req.Subject,
		Data:    req.Body,
		Header:  nats.Header{wire.InvocationHeader: []string{req.Invocation}},
	}
	reply, err := r.request(ctx, msg, req.Deadline)
	switch {
	case err == nil:
	case errors.Is(err, nats.ErrNoResponders):
		return nil, transport.ErrNoResponders
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return nil, transport.ErrTimeout
	case errors.Is(err, context.Canceled):
		return nil, err
	case !r.nc.IsConnected():
		return nil, fmt.Errorf("%w: %v", transport.ErrNotConnected, err)
	default:
		return nil, err
	}
	out := &transport.Reply{Body: reply.Data}
	if reply.Header != nil {
		out.ErrorCode = reply.Header.Get(wire.ErrorCodeHeader)
		out.Error = reply.Header.Get(wire.ErrorHeader)
	}
	return out, nil
}

// request waits for msg's reply until deadline or ctx's end. A context
// that cannot end (Done is nil: the chain's, which outlives its caller)
// leaves the deadline alone to bound the wait, with the client's pooled
// timer; only one that can is joined with the deadline in a context of
// its own.
func (r *Requester) request(ctx context.Context, msg *nats.Msg, deadline time.Time) (*nats.Msg, error) {
	switch {
	case deadline.IsZero():
		return r.nc.RequestMsgWithContext(ctx, msg)
	case ctx.Done() == nil:
		timeout := time.Until(deadline)
		if timeout <= 0 {
			return nil, nats.ErrTimeout
		}
		return r.nc.RequestMsg(msg, timeout)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return r.nc.RequestMsgWithContext(ctx, msg)
}

var _ transport.Requester = (*Requester)(nil)
