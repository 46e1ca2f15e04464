package garmtool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The runtime's own answers, by the code they go with.
const (
	codeInternal    = "500"
	codeUnavailable = "503"

	msgMissingInvocation = "missing invocation context"
	msgShuttingDown      = "shutting down"
	msgOverloaded        = "overloaded: queued past its deadline"
	msgContractMismatch  = "request does not match the contract this service implements"
	msgInternal          = "internal error"
	msgPanicked          = "handler panicked"
	msgNoResponse        = "handler returned no response and no error"
	msgNotMarshalled     = "response could not be marshalled"
)

// maxErrorMessage bounds the message of an error answer: it travels in a
// header, and an answer larger than the server's payload limit would never
// arrive, turning a refusal into a timeout.
const maxErrorMessage = 4 << 10

// serve answers one request, in the order design 5.3 fixes. It runs on the
// subscription's goroutine and has answered before it returns, so each
// instance handles one request per tool at a time.
func (srv *server) serve(ep *endpoint, req micro.Request) {
	if req.Reply() == "" {
		// No one can receive an answer, so the tool must not act on it.
		srv.log.Debug("garmtool: dropped a request with no reply subject", "subject", ep.subject)
		return
	}
	inv, err := invocationOf(req)
	ctx, span := srv.startSpan(ep, inv)
	code := srv.answer(ctx, ep, req, inv, err)
	endSpan(span, code)
}

// answer answers one request whose invocation was decoded (or not, err)
// and returns the error code it answered with, "" for a response.
func (srv *server) answer(ctx context.Context, ep *endpoint, req micro.Request, inv *toolv1.InvocationContext, err error) string {
	if err != nil {
		srv.answerError(req, ep, nil, toolbind.CodeBadRequest, msgMissingInvocation, err)
		return toolbind.CodeBadRequest
	}
	if !srv.gate.enter() {
		srv.answerError(req, ep, inv, codeUnavailable, msgShuttingDown, nil)
		return codeUnavailable
	}
	defer srv.gate.leave()

	var deadline time.Time
	if d := inv.GetDeadline(); d != nil {
		deadline = d.AsTime()
		if !time.Now().Before(deadline) {
			srv.answerError(req, ep, inv, toolbind.CodeTooManyRequests, msgOverloaded, nil)
			return toolbind.CodeTooManyRequests
		}
	}
	in := srv.newRequest(ep, inv)
	if in == nil {
		srv.answerError(req, ep, inv, codeInternal, msgInternal, errors.New("the request constructor returned no message"))
		return codeInternal
	}
	if err := unmarshalRequest(req.Data(), in); err != nil {
		// The caller sees the static message; the author's log says which
		// tool, what it expects and why the request is not that.
		srv.log.Warn("garmtool: a request does not match the contract", "tool", ep.ref.FQN, "call_id", inv.GetCallId(),
			"want", string(in.ProtoReflect().Descriptor().FullName()), "cause", err.Error())
		srv.answerError(req, ep, inv, toolbind.CodeBadRequest, msgContractMismatch, err)
		return toolbind.CodeBadRequest
	}

	ctx = wire.WithInvocation(ctx, inv)
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	out, err := srv.call(ctx, ep, inv, in)
	code, message, body := outcome(out, err)
	if code != "" {
		srv.answerError(req, ep, inv, code, message, nil)
		return code
	}
	if err := req.Respond(body); err != nil {
		srv.log.Warn("garmtool: could not send the answer", "tool", ep.ref.FQN, "call_id", inv.GetCallId(), "error", err)
	}
	return ""
}

// invocationOf decodes the request's one Garm-Invocation header.
func invocationOf(req micro.Request) (*toolv1.InvocationContext, error) {
	values := req.Headers().Values(wire.InvocationHeader)
	if len(values) != 1 {
		return nil, fmt.Errorf("%d %s headers, want exactly one", len(values), wire.InvocationHeader)
	}
	return wire.DecodeInvocation(values[0])
}

// unmarshalRequest decodes a request and refuses fields the contract does
// not declare, at any depth: a tool would silently ignore them, and a field
// the caller set and the tool ignored could change what the call means.
func unmarshalRequest(data []byte, in proto.Message) error {
	if err := proto.Unmarshal(data, in); err != nil {
		return err
	}
	if hasUnknownFields(in.ProtoReflect()) {
		return errors.New("the request carries fields the contract does not declare")
	}
	return nil
}

func hasUnknownFields(m protoreflect.Message) bool {
	if len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			list := v.List()
			for i := 0; i < list.Len() && !found; i++ {
				found = hasUnknownFields(list.Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				found = hasUnknownFields(mv.Message())
				return !found
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			found = hasUnknownFields(v.Message())
		}
		return !found
	})
	return found
}

var errPanicked = errors.New(msgPanicked)

// newRequest makes the message to decode a request into. It is the tool's
// code too (generated, and checked once at registration), so it is held to
// the same rule as the handler: it cannot take the process down.
func (srv *server) newRequest(ep *endpoint, inv *toolv1.InvocationContext) (in proto.Message) {
	defer func() {
		if p := recover(); p != nil {
			srv.log.Error("garmtool: request constructor panicked", "tool", ep.ref.FQN, "call_id", inv.GetCallId(),
				"panic", fmt.Sprintf("%v", p), "stack", string(debug.Stack()))
			in = nil
		}
	}()
	in = ep.newRequest()
	if in == nil || !in.ProtoReflect().IsValid() {
		return nil
	}
	return in
}

// call runs the handler; a panic is recovered, logged with its stack, and
// answered as an internal error, so one bad request cannot take the process
// and every other call with it.
func (srv *server) call(ctx context.Context, ep *endpoint, inv *toolv1.InvocationContext, in proto.Message) (out proto.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			srv.log.Error("garmtool: handler panicked", "tool", ep.ref.FQN, "call_id", inv.GetCallId(),
				"panic", fmt.Sprintf("%v", p), "stack", string(debug.Stack()))
			out, err = nil, errPanicked
		}
	}()
	return ep.handle(ctx, in)
}

// outcome turns what a handler returned into an answer: an error code and
// message, or the marshalled response (code "").
func outcome(out proto.Message, err error) (code, message string, body []byte) {
	if err != nil {
		var coded *toolbind.CodedError
		if errors.As(err, &coded) && coded != nil {
			message = cleanMessage(coded.Message)
			if toolbind.IsRefusalCode(coded.Code) {
				if message == "" {
					message = coded.Code
				}
				return coded.Code, message, nil
			}
		} else {
			message = cleanMessage(errorText(err))
		}
		if message == "" {
			message = msgInternal
		}
		return codeInternal, message, nil
	}
	if out == nil || !out.ProtoReflect().IsValid() {
		return codeInternal, msgNoResponse, nil
	}
	body, err = proto.Marshal(out)
	if err != nil {
		return codeInternal, msgNotMarshalled, nil
	}
	return "", "", body
}

// errorText is err's message, or "" if producing it panics.
func errorText(err error) (text string) {
	defer func() {
		if recover() != nil {
			text = ""
		}
	}()
	return err.Error()
}

// cleanMessage makes a message fit a header: valid UTF-8 on one line, no
// surrounding space, at most maxErrorMessage bytes.
func cleanMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\r' || r == '\n' }), " ")
	s = strings.TrimSpace(s)
	if len(s) > maxErrorMessage {
		cut := maxErrorMessage - len("…")
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// answerError answers with an error code. cause, when given, is why, for the
// debug log only.
func (srv *server) answerError(req micro.Request, ep *endpoint, inv *toolv1.InvocationContext, code, message string, cause error) {
	if srv.log.Enabled(context.Background(), slog.LevelDebug) {
		attrs := []any{"tool", ep.ref.FQN, "call_id", inv.GetCallId(), "code", code, "message", message}
		if cause != nil {
			attrs = append(attrs, "cause", cause.Error())
		}
		srv.log.Debug("garmtool: answered with an error", attrs...)
	}
	if err := req.Error(code, message, nil); err != nil {
		srv.log.Warn("garmtool: could not send the answer", "tool", ep.ref.FQN, "call_id", inv.GetCallId(), "error", err)
	}
}
