package garmtool_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// counting counts the requests that reach the handler.
func counting(reached *atomic.Int32) func(context.Context, proto.Message) (proto.Message, error) {
	return func(ctx context.Context, req proto.Message) (proto.Message, error) {
		reached.Add(1)
		return req, nil
	}
}

func body(t *testing.T, s string) []byte {
	t.Helper()
	b, err := proto.Marshal(wrapperspb.String(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEveryMalformedInvocationIsRefusedAsMissingAndNeverReachesTheHandler(t *testing.T) {
	var reached atomic.Int32
	h := serve(t, counting(&reached))
	valid := validHeader(t).Get(wire.InvocationHeader)
	noCallID, _ := proto.Marshal(&toolv1.InvocationContext{Attribution: &toolv1.CallContext{Tenant: "acme"}})
	badDeadline, _ := proto.Marshal(&toolv1.InvocationContext{CallId: "c", Deadline: &timestamppb.Timestamp{Seconds: -1 << 62}})

	tests := []struct {
		name   string
		header nats.Header
	}{
		{"absent", nil},
		{"only other headers", nats.Header{"Other": {"x"}}},
		{"another spelling of the name", nats.Header{strings.ToLower(wire.InvocationHeader): {valid}}},
		{"empty", nats.Header{wire.InvocationHeader: {""}}},
		{"not base64", nats.Header{wire.InvocationHeader: {"%%% not base64 %%%"}}},
		{"not the message", nats.Header{wire.InvocationHeader: {base64.StdEncoding.EncodeToString([]byte("\xff\xff\xff garbage"))}}},
		{"no call id", nats.Header{wire.InvocationHeader: {base64.StdEncoding.EncodeToString(noCallID)}}},
		{"an invalid deadline", nats.Header{wire.InvocationHeader: {base64.StdEncoding.EncodeToString(badDeadline)}}},
		{"two values, both valid", nats.Header{wire.InvocationHeader: {valid, valid}}},
		{"two values, one valid", nats.Header{wire.InvocationHeader: {valid, ""}}},
		{"huge", nats.Header{wire.InvocationHeader: {strings.Repeat("QUFB", wire.MaxInvocationHeaderSize/4+1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAnswer(t, request(t, h, tt.header, body(t, "hi")), "400", "missing invocation context")
		})
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the handler was reached %d times", n)
	}
	if err := request(t, h, nats.Header{wire.InvocationHeader: {valid}}, body(t, "hi")); err != nil {
		t.Fatalf("the same request with a valid invocation: %v", err)
	}
	if n := reached.Load(); n != 1 {
		t.Fatalf("the handler was reached %d times by one valid request", n)
	}
}

func TestABodyThatDoesNotUnmarshalIsRefusedAndNeverReachesTheHandler(t *testing.T) {
	var reached atomic.Int32
	h := serve(t, counting(&reached))
	unknownField := protowire.AppendVarint(protowire.AppendTag(body(t, "hi"), 99, protowire.VarintType), 1)
	tests := []struct {
		name string
		data []byte
	}{
		{"garbage", []byte("\xff\xff\xff\xff")},
		{"truncated", body(t, "hello")[:3]},
		{"invalid UTF-8 in a string", protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "\xff")},
		{"a field the contract does not declare", unknownField},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAnswer(t, request(t, h, validHeader(t), tt.data), "400", "request does not match the contract this service implements")
		})
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the handler was reached %d times", n)
	}
}

func TestAnEmptyBodyIsTheEmptyRequest(t *testing.T) {
	h := serve(t, echoing)
	var out wrapperspb.StringValue
	if err := garmtooltest.Answer(mustRequest(t, h, validHeader(t), nil), &out); err != nil || out.GetValue() != "" {
		t.Fatalf("empty body: %q, %v", out.GetValue(), err)
	}
}

func mustRequest(t *testing.T, h *garmtooltest.Harness, header nats.Header, data []byte) *nats.Msg {
	t.Helper()
	reply, err := h.Conn().RequestMsgWithContext(testContext(t), &nats.Msg{Subject: echo.Subject, Header: header, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

func TestAPassedDeadlineIsShedWith429AndTheHandlerNeverRuns(t *testing.T) {
	var reached atomic.Int32
	h := serve(t, counting(&reached))
	for _, deadline := range []time.Time{time.Now().Add(-time.Millisecond), time.Unix(0, 0), time.Now().Add(-24 * time.Hour)} {
		_, err := callEcho(t, h, "late", garmtooltest.WithDeadline(deadline))
		wantAnswer(t, err, "429", "overloaded: queued past its deadline")
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the handler was reached %d times", n)
	}
}

func TestALiveDeadlineBoundsTheHandlersContext(t *testing.T) {
	type seen struct {
		deadline time.Time
		ok       bool
		err      error
	}
	got := make(chan seen, 1)
	h := serve(t, func(ctx context.Context, req proto.Message) (proto.Message, error) {
		deadline, ok := ctx.Deadline()
		<-ctx.Done() // the deadline is near; the context must end at it
		got <- seen{deadline, ok, ctx.Err()}
		return req, nil
	})
	deadline := time.Now().Add(200 * time.Millisecond)
	_, _ = callEcho(t, h, "x", garmtooltest.WithDeadline(deadline))
	s := <-got
	if !s.ok || !s.deadline.Equal(deadline) {
		t.Fatalf("handler's deadline = %v (set %v), want the invocation's %v", s.deadline, s.ok, deadline)
	}
	if !errors.Is(s.err, context.DeadlineExceeded) {
		t.Fatalf("handler's context ended with %v, want the deadline", s.err)
	}
}

func TestAnInvocationWithoutADeadlineLeavesTheContextUnbounded(t *testing.T) {
	got := make(chan bool, 1)
	h := serve(t, func(ctx context.Context, req proto.Message) (proto.Message, error) {
		_, ok := ctx.Deadline()
		got <- ok
		return req, nil
	})
	if _, err := callEcho(t, h, "x", garmtooltest.WithDeadline(time.Time{})); err != nil {
		t.Fatal(err)
	}
	if <-got {
		t.Fatal("the handler's context has a deadline the invocation did not set")
	}
}

func TestTheHandlerFindsTheInvocationOnItsContext(t *testing.T) {
	got := make(chan *toolv1.InvocationContext, 1)
	h := serve(t, func(ctx context.Context, req proto.Message) (proto.Message, error) {
		got <- wire.InvocationFrom(ctx)
		return req, nil
	})
	deadline := time.Now().Add(time.Minute)
	if _, err := callEcho(t, h, "x",
		garmtooltest.WithCallID("evt-42"),
		garmtooltest.WithTenant("acme"),
		garmtooltest.WithPrincipal("user:ada", toolv1.PrincipalKind_PRINCIPAL_KIND_USER),
		garmtooltest.WithDeadline(deadline),
		garmtooltest.WithInvocation(func(inv *toolv1.InvocationContext) { inv.Traceparent = "00-abc-def-01" }),
	); err != nil {
		t.Fatal(err)
	}
	inv := <-got
	if inv.GetCallId() != "evt-42" || inv.GetAttribution().GetTenant() != "acme" ||
		inv.GetPrincipal().GetSubject() != "user:ada" || inv.GetTraceparent() != "00-abc-def-01" ||
		!inv.GetDeadline().AsTime().Equal(deadline) {
		t.Fatalf("the handler found %v", inv)
	}
}

func TestARequestWithoutAReplySubjectIsDroppedAndNeverReachesTheHandler(t *testing.T) {
	var reached atomic.Int32
	// One instance: the dropped message is handled before the call after it.
	h := serve(t, counting(&reached), garmtool.WithConcurrency(1))
	if err := h.Conn().PublishMsg(&nats.Msg{Subject: echo.Subject, Header: validHeader(t), Data: body(t, "nobody waits")}); err != nil {
		t.Fatal(err)
	}
	if got, err := callEcho(t, h, "after"); err != nil || got != "after" {
		t.Fatalf("the call after it: %q, %v", got, err)
	}
	if n := reached.Load(); n != 1 {
		t.Fatalf("the handler was reached %d times, want once (by the call that awaited an answer)", n)
	}
}
