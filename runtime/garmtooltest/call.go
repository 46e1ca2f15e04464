package garmtooltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// What a call carries unless a CallOption says otherwise.
const (
	// DefaultTimeout is how far ahead the invocation's deadline is, and how
	// long Call waits for an answer when its context has no deadline.
	DefaultTimeout = 10 * time.Second
	// DefaultTenant is the invocation's attribution tenant.
	DefaultTenant = "test"
	// DefaultPrincipal is the invocation's principal subject, a user.
	DefaultPrincipal = "user:test"
)

// A CallOption shapes the invocation context a call carries.
type CallOption func(*toolv1.InvocationContext)

// WithCallID sets the call id (by default a fresh random one per call).
func WithCallID(id string) CallOption {
	return func(inv *toolv1.InvocationContext) { inv.CallId = id }
}

// WithTenant sets the attribution's tenant.
func WithTenant(tenant string) CallOption {
	return func(inv *toolv1.InvocationContext) { attribution(inv).Tenant = tenant }
}

// WithPrincipal sets the principal the call is for.
func WithPrincipal(subject string, kind toolv1.PrincipalKind) CallOption {
	return func(inv *toolv1.InvocationContext) {
		inv.Principal = &toolv1.InvocationPrincipal{Subject: subject, Kind: kind}
	}
}

// WithDeadline sets the invocation's absolute deadline; a zero time leaves
// the invocation without one. A deadline in the past is how a test sees a
// request shed as queued too long.
func WithDeadline(deadline time.Time) CallOption {
	return func(inv *toolv1.InvocationContext) {
		inv.Deadline = nil
		if !deadline.IsZero() {
			inv.Deadline = timestamppb.New(deadline)
		}
	}
}

// WithInvocation shapes anything else: shape receives the invocation after
// the defaults and the options before it.
func WithInvocation(shape func(*toolv1.InvocationContext)) CallOption {
	return shape
}

func attribution(inv *toolv1.InvocationContext) *toolv1.CallContext {
	if inv.Attribution == nil {
		inv.Attribution = &toolv1.CallContext{}
	}
	return inv.Attribution
}

// NewInvocation returns the invocation context garmd would send for a call
// by DefaultPrincipal of DefaultTenant, with a fresh call id and a deadline
// DefaultTimeout from now, shaped by opts. Use it with wire.EncodeInvocation
// to build raw requests.
func NewInvocation(opts ...CallOption) *toolv1.InvocationContext {
	return newInvocation(time.Now().Add(DefaultTimeout), opts)
}

func newInvocation(deadline time.Time, opts []CallOption) *toolv1.InvocationContext {
	inv := &toolv1.InvocationContext{
		Attribution: &toolv1.CallContext{Tenant: DefaultTenant},
		Principal:   &toolv1.InvocationPrincipal{Subject: DefaultPrincipal, Kind: toolv1.PrincipalKind_PRINCIPAL_KIND_USER},
		Deadline:    timestamppb.New(deadline),
		CallId:      newCallID(),
	}
	for _, opt := range opts {
		if opt != nil {
			opt(inv)
		}
	}
	return inv
}

func newCallID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "call-" + hex.EncodeToString(b)
}

// Call calls the tool ref on nc the way garmd does: req in binary on the
// subject wire derives from ref.Method, with a Garm-Invocation header shaped
// by opts. The invocation's deadline defaults to ctx's, or DefaultTimeout
// from now, whichever is sooner; Call waits for the answer until ctx is done
// (DefaultTimeout when ctx has no deadline).
//
// The answer is unmarshalled into resp. An error answer — the tool's refusal
// or the runtime's — is returned as an error naming the tool and the
// request's type and wrapping a *toolbind.CodedError with its code and
// message (find it with errors.As); anything else that goes wrong (no responders, a timeout, an
// answer that does not unmarshal) is another error.
func Call(ctx context.Context, nc *nats.Conn, ref toolbind.ToolRef, req, resp proto.Message, opts ...CallOption) error {
	if nc == nil || req == nil || resp == nil {
		return errors.New("garmtooltest: Call needs a connection, a request and a response to fill")
	}
	deadline := time.Now().Add(DefaultTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	header, err := wire.EncodeInvocation(newInvocation(deadline, opts))
	if err != nil {
		return fmt.Errorf("garmtooltest: calling %s: %w", ref.FQN, err)
	}
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("garmtooltest: calling %s: marshalling the request: %w", ref.FQN, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	reply, err := nc.RequestMsgWithContext(ctx, &nats.Msg{
		Subject: wire.Subject(ref.Method),
		Header:  nats.Header{wire.InvocationHeader: []string{header}},
		Data:    body,
	})
	if err != nil {
		return fmt.Errorf("garmtooltest: calling %s: %w", ref.FQN, err)
	}
	if err := Answer(reply, resp); err != nil {
		// Which tool refused which request: a test that picked the wrong
		// tool reads it here, and the service's log says why.
		return fmt.Errorf("garmtooltest: %s answered a %s with: %w", ref.FQN, req.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

// Answer reads a tool's answer: an error answer becomes a
// *toolbind.CodedError, a response is unmarshalled into resp.
func Answer(reply *nats.Msg, resp proto.Message) error {
	if code := reply.Header.Get(wire.ErrorCodeHeader); code != "" {
		return &toolbind.CodedError{Code: code, Message: reply.Header.Get(wire.ErrorHeader)}
	}
	if err := proto.Unmarshal(reply.Data, resp); err != nil {
		return fmt.Errorf("garmtooltest: the answer does not unmarshal into %T: %w", resp, err)
	}
	return nil
}
