package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/garm-dev/garm/daemon/internal/transport"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// Requester sends tool calls over one NATS connection. It keeps its own
// replies: one wildcard subscription under the connection's inbox prefix,
// and a table of the requests waiting on it, so that a publish the server
// refuses can end the requests it refused (nats.go's own request cannot be
// woken by anything but its reply or its timer).
type Requester struct {
	nc *nats.Conn
	// prefix is the reply subjects' prefix, "<inbox>."; a request's reply
	// subject is prefix and its token.
	prefix string

	mu      sync.Mutex
	sub     *nats.Subscription // nil until the first request, and once closed
	pending map[string]waiter  // by token
	seq     uint64
}

// waiter is one request waiting for its reply.
type waiter struct {
	subject string
	// done receives the request's one result; buffered, it is sent to once,
	// by whoever removed the waiter from pending.
	done chan result
}

type result struct {
	msg *nats.Msg
	err error
}

// New is a Requester on nc. It chains nc's asynchronous error handler:
// the handler that was set is still called with every error, after the
// Requester has ended the requests a permissions violation refused.
func New(nc *nats.Conn) *Requester {
	r := &Requester{nc: nc, prefix: nc.NewInbox() + ".", pending: map[string]waiter{}}
	next := nc.ErrorHandler()
	nc.SetErrorHandler(func(c *nats.Conn, s *nats.Subscription, err error) {
		r.refused(err)
		if next != nil {
			next(c, s, err)
		}
	})
	return r
}

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
	if !req.Deadline.IsZero() && !time.Now().Before(req.Deadline) {
		return nil, transport.ErrTimeout
	}
	token, done, err := r.register(req.Subject)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", transport.ErrNotConnected, err)
	}
	msg := &nats.Msg{
		Subject: req.Subject,
		Reply:   r.prefix + token,
		Data:    req.Body,
		Header:  nats.Header{wire.InvocationHeader: []string{req.Invocation}},
	}
	if err := r.nc.PublishMsg(msg); err != nil {
		r.forget(token)
		if !r.nc.IsConnected() {
			return nil, fmt.Errorf("%w: %v", transport.ErrNotConnected, err)
		}
		return nil, err
	}
	reply, err := r.wait(ctx, token, done, req.Deadline)
	if err != nil {
		return nil, err
	}
	if len(reply.Data) == 0 && reply.Header.Get(statusHeader) == noRespondersStatus {
		return nil, transport.ErrNoResponders
	}
	out := &transport.Reply{Body: reply.Data}
	if reply.Header != nil {
		out.ErrorCode = reply.Header.Get(wire.ErrorCodeHeader)
		out.Error = reply.Header.Get(wire.ErrorHeader)
	}
	return out, nil
}

// The status the server answers a request with when nothing subscribes to
// its subject (the client asks for it at CONNECT, as nats.go does).
const (
	statusHeader       = "Status"
	noRespondersStatus = "503"
)

// register adds a waiter for a request on subject, subscribing to the
// replies on first use (and again after the connection closed one).
func (r *Requester) register(subject string) (string, chan result, error) {
	done := make(chan result, 1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sub == nil {
		sub, err := r.nc.Subscribe(r.prefix+"*", r.deliver)
		if err != nil {
			return "", nil, err
		}
		sub.SetClosedHandler(func(string) { r.closed(sub) })
		r.sub = sub
	}
	r.seq++
	token := strconv.FormatUint(r.seq, 36)
	r.pending[token] = waiter{subject: subject, done: done}
	return token, done, nil
}

// forget removes a waiter that will not be answered.
func (r *Requester) forget(token string) {
	r.mu.Lock()
	delete(r.pending, token)
	r.mu.Unlock()
}

// end removes the waiter of token and sends it res, if it is still
// waiting; the caller holds r.mu.
func (r *Requester) end(token string, res result) {
	w, ok := r.pending[token]
	if !ok {
		return
	}
	delete(r.pending, token)
	w.done <- res
}

// deliver is the replies' handler.
func (r *Requester) deliver(m *nats.Msg) {
	token, ok := strings.CutPrefix(m.Subject, r.prefix)
	if !ok {
		return
	}
	r.mu.Lock()
	r.end(token, result{msg: m})
	r.mu.Unlock()
}

// closed ends every request waiting on sub when it closes with the
// connection; the next request subscribes again.
func (r *Requester) closed(sub *nats.Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sub != sub {
		return
	}
	r.sub = nil
	for token := range r.pending {
		r.end(token, result{err: transport.ErrNotConnected})
	}
}

// violation is how the server words a publish it refuses (nats-server's
// pubPermissionViolation), within the error nats.go hands the asynchronous
// error handler.
const violation = `Permissions Violation for Publish to "`

// refused ends at once, with transport.ErrForbidden, every request waiting
// on a subject the server refused a publish to. The server says so
// asynchronously, and such a request would otherwise wait out its deadline
// for a reply that cannot come.
func (r *Requester) refused(err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	subject, ok := quoted(err.Error(), violation)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for token, w := range r.pending {
		if w.subject == subject {
			r.end(token, result{err: transport.ErrForbidden})
		}
	}
}

// quoted is the text between lead and the next double quote in s.
func quoted(s, lead string) (string, bool) {
	_, rest, ok := strings.Cut(s, lead)
	if !ok {
		return "", false
	}
	value, _, ok := strings.Cut(rest, `"`)
	return value, ok && value != ""
}

// wait waits for the waiter of token until deadline or ctx's end. A
// context that cannot end (Done is nil: the chain's, which outlives its
// caller) costs nothing but a pooled timer.
func (r *Requester) wait(ctx context.Context, token string, done chan result, deadline time.Time) (*nats.Msg, error) {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		t := timers.Get().(*time.Timer)
		t.Reset(time.Until(deadline))
		defer func() {
			t.Stop()
			timers.Put(t)
		}()
		expired = t.C
	}
	select {
	case res := <-done:
		return res.msg, res.err
	case <-expired:
		return nil, r.abandon(token, done, transport.ErrTimeout)
	case <-ctx.Done():
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			err = transport.ErrTimeout
		}
		return nil, r.abandon(token, done, err)
	}
}

// abandon stops waiting: the waiter is removed, unless its result came
// meanwhile, which is then the answer after all.
func (r *Requester) abandon(token string, done chan result, err error) error {
	r.mu.Lock()
	_, waiting := r.pending[token]
	delete(r.pending, token)
	r.mu.Unlock()
	if !waiting {
		if res := <-done; res.err != nil {
			return res.err
		}
	}
	return err
}

// timers are the stopped timers requests wait with.
var timers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

var _ transport.Requester = (*Requester)(nil)
