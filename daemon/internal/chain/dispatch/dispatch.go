package dispatch

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/codec"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/transport"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Hop is what the invocation context carries besides the principal.
type Hop struct {
	// CallID is the ledger's event id.
	CallID        string
	CorrelationID string
	Deadline      time.Time
	Traceparent   string
	Tracestate    string
	// IdempotencyKey is the runner-sourced field's value, when one was set.
	IdempotencyKey string
	// GrantJTI is the spent approval grant's id, for MODE_GRANT tools.
	GrantJTI string
}

// invocationParts are the messages of one invocation, allocated together:
// one allocation per call instead of one per message.
type invocationParts struct {
	inv         toolv1.InvocationContext
	attribution toolv1.CallContext
	principal   toolv1.InvocationPrincipal
	deadline    timestamppb.Timestamp
}

// Invocation is the context a tool receives for a call (design 3.3).
func Invocation(p *call.Principal, h *Hop) *toolv1.InvocationContext {
	parts := new(invocationParts)
	parts.attribution.Tenant = p.Tenant
	parts.attribution.CorrelationId = h.CorrelationID
	parts.principal.Subject, parts.principal.Kind = p.Subject, p.Kind
	parts.deadline.Seconds, parts.deadline.Nanos = h.Deadline.Unix(), int32(h.Deadline.Nanosecond())
	inv := &parts.inv
	inv.Attribution = &parts.attribution
	inv.Principal = &parts.principal
	inv.Traceparent = h.Traceparent
	inv.Tracestate = h.Tracestate
	inv.Deadline = &parts.deadline
	inv.CallId = h.CallID
	inv.IdempotencyKey = h.IdempotencyKey
	inv.GrantJti = h.GrantJTI
	inv.Agent = p.Agent()
	if len(p.Act) > 0 {
		inv.Act = make([]*toolv1.Act, len(p.Act))
		for i, a := range p.Act {
			inv.Act[i] = &toolv1.Act{Subject: a.Subject, Kind: a.Kind}
		}
	}
	return inv
}

// MaxTimeoutHeader bounds the Garm-Timeout-Ms digits parsed.
const maxTimeoutDigits = 10

// Deadline is the call's absolute deadline: now plus the caller's
// Garm-Timeout-Ms when it is sooner than the tool timeout, else now plus the
// tool timeout. A header that is not a positive decimal number of
// milliseconds is refused.
func Deadline(now time.Time, header string, toolTimeout time.Duration) (time.Time, error) {
	if header == "" {
		return now.Add(toolTimeout), nil
	}
	if len(header) > maxTimeoutDigits {
		return time.Time{}, deny.Deny(deny.InvalidArgument, "Garm-Timeout-Ms is too long")
	}
	ms, err := strconv.ParseUint(header, 10, 64)
	if err != nil || ms == 0 {
		return time.Time{}, deny.Deny(deny.InvalidArgument, "Garm-Timeout-Ms is not a positive number of milliseconds")
	}
	if d := time.Duration(ms) * time.Millisecond; d < toolTimeout {
		return now.Add(d), nil
	}
	return now.Add(toolTimeout), nil
}

// Dispatcher sends calls through a transport.
type Dispatcher struct {
	transport transport.Requester
}

// New is a Dispatcher over t.
func New(t transport.Requester) *Dispatcher { return &Dispatcher{transport: t} }

// busState is what a transport may know about its bus before a call is
// sent (natsbus.Requester does).
type busState interface {
	Connected() error
}

// Ready is nil when a call to t could be sent now, or the 503 refusal a
// call would meet because the transport knows its bus is away. The chain
// asks before it spends anything a call cannot get back (design 7.4 step 5);
// a transport that cannot tell is taken at its word at Call.
func (d *Dispatcher) Ready(t *call.Tool) error {
	bs, ok := d.transport.(busState)
	if !ok {
		return nil
	}
	if err := bs.Connected(); err != nil {
		return deny.Fail(deny.ToolUnavailable, deny.KindBusUnavailable, "the bus is not connected, so "+t.Subject+" cannot be called: "+err.Error())
	}
	return nil
}

// Call sends req to t with the invocation inv and waits for the answer
// until inv's deadline (or ctx, whichever ends first). It returns the
// answer decoded as the tool's output, or a refusal.
func (d *Dispatcher) Call(ctx context.Context, t *call.Tool, inv *toolv1.InvocationContext, req protoreflect.Message) (protoreflect.Message, error) {
	bodyBuf := bodyBuffers.Get().(*[]byte)
	body, err := codec.AppendBinary((*bodyBuf)[:0], req)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "encode", "the request did not encode: "+err.Error())
	}
	header, err := encodeInvocation(inv)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "encode", "the invocation did not encode: "+err.Error())
	}
	deadline := inv.GetDeadline().AsTime()
	reply, err := d.transport.Request(ctx, &transport.Request{Subject: t.Subject, Invocation: header, Body: body, Deadline: deadline})
	// The transport has copied what it keeps of the body (transport.Request).
	if cap(body) <= maxPooledBody {
		*bodyBuf = body[:0]
		bodyBuffers.Put(bodyBuf)
	}
	switch {
	case err == nil:
	case errors.Is(err, transport.ErrNoResponders):
		return nil, deny.Fail(deny.ToolUnavailable, deny.KindNoResponders, "no tool service answered on "+t.Subject)
	case errors.Is(err, transport.ErrNotConnected):
		return nil, deny.Fail(deny.ToolUnavailable, deny.KindBusUnavailable, "the bus is not connected: "+err.Error())
	case errors.Is(err, transport.ErrForbidden):
		return nil, deny.Fail(deny.ToolUnavailable, deny.KindBusForbidden, "the bus refused to carry the call: garmd's identity may not publish on "+
			t.Subject+"; its bus permissions are not the serving catalogue's (garm-catalogue nats-permissions)")
	case errors.Is(err, transport.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return nil, deny.Fail(deny.DeadlineExceeded, deny.KindTimeout, "no answer from "+t.Subject+" before the deadline")
	default:
		return nil, deny.Fail(deny.Internal, "transport", "the request to "+t.Subject+" failed: "+err.Error())
	}
	if reply.ErrorCode != "" {
		if wire.IsRefusalCode(reply.ErrorCode) {
			return nil, deny.Refuse(reply.ErrorCode, "the tool refused with "+reply.ErrorCode+": "+reply.Error)
		}
		if !time.Now().Before(deadline) {
			// The tool gave up because the call's deadline passed (its
			// context is bounded by the same instant): that is a timeout,
			// not a failure of the tool.
			return nil, deny.Fail(deny.DeadlineExceeded, deny.KindTimeout, "the tool gave up at the deadline with "+reply.ErrorCode+": "+reply.Error)
		}
		return nil, deny.Fail(deny.Internal, "tool_failed", "the tool failed with "+reply.ErrorCode+": "+reply.Error)
	}
	out, err := codec.DecodeReply(t.Output, reply.Body)
	if err != nil {
		return nil, deny.Fail(deny.Internal, "bad_reply", err.Error())
	}
	return out, nil
}

// bodyBuffers are the buffers requests are encoded in for the hop; a call
// takes one and gives it back once the transport returns.
var bodyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds a body buffer kept for reuse: a large request's is
// left to the collector rather than held.
const maxPooledBody = 64 << 10

// headerBuffers are the buffers invocations are encoded in; a call takes
// one and gives it back once the header's string is made.
var headerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledHeader bounds a buffer kept for reuse: larger invocations are
// rare (a long tracestate), and their buffers are not held.
const maxPooledHeader = 4 << 10

// encodeInvocation is wire.EncodeInvocation in a reused buffer: the
// header's string is the only allocation.
func encodeInvocation(inv *toolv1.InvocationContext) (string, error) {
	buf := headerBuffers.Get().(*[]byte)
	value, err := wire.AppendInvocation((*buf)[:0], inv)
	header := string(value)
	if cap(value) <= maxPooledHeader {
		*buf = value[:0]
		headerBuffers.Put(buf)
	}
	return header, err
}
