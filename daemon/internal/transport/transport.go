package transport

import (
	"context"
	"errors"
	"time"
)

// Request is one tool call on the bus.
type Request struct {
	// Subject is the tool's subject (runtime/wire.Subject).
	Subject string
	// Invocation is the Garm-Invocation header's value.
	Invocation string
	// Body is the request in binary protobuf. It is the caller's again once
	// Request returns (the dispatcher reuses it): a transport copies what
	// it keeps beyond that.
	Body []byte
	// Deadline is when the caller stops waiting for the reply: the
	// call's deadline, the one its invocation carries. Zero leaves the
	// wait to the context alone.
	Deadline time.Time
}

// Reply is what came back: a response body, or an error code and
// description from micro's error headers.
type Reply struct {
	Body []byte
	// ErrorCode is the Nats-Service-Error-Code header; empty for a response.
	ErrorCode string
	// Error is the Nats-Service-Error header.
	Error string
}

// Errors a Requester returns, found with errors.Is.
var (
	// ErrNoResponders: no service is subscribed on the subject.
	ErrNoResponders = errors.New("no tool service is serving the subject")
	// ErrTimeout: the context's deadline passed before a reply.
	ErrTimeout = errors.New("the tool did not reply before the deadline")
	// ErrNotConnected: the bus is not connected.
	ErrNotConnected = errors.New("not connected to the bus")
	// ErrForbidden: the bus refused to carry the request, because the
	// identity it was sent as may not publish on the subject. It is said
	// at once, not by a deadline.
	ErrForbidden = errors.New("the bus refused the request: this identity may not publish on the subject")
)

// Requester sends a request and waits for its reply until its Deadline
// passes or ctx is done, whichever comes first, or until the bus refuses
// it (ErrForbidden). The dispatcher passes a
// context without a deadline of its own, so that a call whose context
// cannot be cancelled (every surface's, since a call outlives its
// caller's connection) costs no deadline context and no timer of its own.
type Requester interface {
	Request(ctx context.Context, req *Request) (*Reply, error)
}

// Func adapts a function to Requester.
type Func func(ctx context.Context, req *Request) (*Reply, error)

// Request calls f.
func (f Func) Request(ctx context.Context, req *Request) (*Reply, error) { return f(ctx, req) }

var _ Requester = Func(nil)
