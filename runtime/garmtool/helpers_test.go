package garmtool_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// testTimeout bounds every wait in these tests; none should come near it.
const testTimeout = 10 * time.Second

var (
	hashA = strings.Repeat("a", 64)
	hashB = strings.Repeat("b", 64)
)

// toolRef names a test tool the way generated code would.
func toolRef(service, method string) toolbind.ToolRef {
	path := "/" + service + "/" + method
	pkg := service[:strings.LastIndex(service, ".")]
	return toolbind.ToolRef{
		FQN:             pkg + "." + strings.ToLower(method),
		Subject:         wire.Subject(path),
		Method:          path,
		Service:         service,
		ContractVersion: "1.0.0",
		DescriptorHash:  hashA,
	}
}

// echo is the tool most tests serve: a string in, a string out.
var echo = toolRef("test.v1.Echo", "Echo")

func newString() proto.Message { return new(wrapperspb.StringValue) }

// echoing answers with the request.
func echoing(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil }

// serve runs a Service with one tool, echo, served by h.
func serve(t *testing.T, h toolbind.Handler, opts ...garmtool.Option) *garmtooltest.Harness {
	t.Helper()
	svc := garmtool.New("test", "1.0.0", opts...)
	if err := svc.Endpoint(echo, newString, h); err != nil {
		t.Fatal(err)
	}
	return garmtooltest.Start(t, svc)
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// callEcho calls echo with in and returns its answer.
func callEcho(t *testing.T, h *garmtooltest.Harness, in string, opts ...garmtooltest.CallOption) (string, error) {
	t.Helper()
	var out wrapperspb.StringValue
	err := h.Call(testContext(t), echo, wrapperspb.String(in), &out, opts...)
	return out.GetValue(), err
}

// wantAnswer fails unless err is an error answer with code and message.
func wantAnswer(t *testing.T, err error, code, message string) {
	t.Helper()
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) {
		t.Fatalf("got %v, want the answer %s %q", err, code, message)
	}
	if coded.Code != code || coded.Message != message {
		t.Fatalf("answered %s %q, want %s %q", coded.Code, coded.Message, code, message)
	}
}

// request sends a raw request on echo's subject from the callers'
// connection and returns the answer read as garmtooltest reads it.
func request(t *testing.T, h *garmtooltest.Harness, header nats.Header, data []byte) error {
	t.Helper()
	reply, err := h.Conn().RequestMsgWithContext(testContext(t), &nats.Msg{Subject: echo.Subject, Header: header, Data: data})
	if err != nil {
		t.Fatalf("raw request: %v", err)
	}
	return garmtooltest.Answer(reply, new(wrapperspb.StringValue))
}

// validHeader is a header carrying a fresh valid invocation.
func validHeader(t *testing.T, opts ...garmtooltest.CallOption) nats.Header {
	t.Helper()
	value, err := wire.EncodeInvocation(garmtooltest.NewInvocation(opts...))
	if err != nil {
		t.Fatal(err)
	}
	return nats.Header{wire.InvocationHeader: []string{value}}
}

// waitFor polls cond until it holds, failing the test at ctx's end. It
// waits for a state to be reached; it never asserts how long that took.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// waitOffTheBus waits until no instance of the micro service name answers a
// PING: every instance has stopped, so shutdown has begun.
func waitOffTheBus(t *testing.T, ctx context.Context, nc *nats.Conn, name string) {
	t.Helper()
	waitFor(t, ctx, name+" to leave the bus", func() bool {
		_, err := nc.Request("$SRV.PING."+name, nil, testTimeout)
		return errors.Is(err, nats.ErrNoResponders)
	})
}

// receivedMore waits until the connection has received n more messages than
// it had when receivedMore was called.
func receivedMore(t *testing.T, ctx context.Context, nc *nats.Conn, n uint64) func() {
	t.Helper()
	base := nc.Stats().InMsgs
	return func() {
		t.Helper()
		waitFor(t, ctx, "the service to receive the request", func() bool { return nc.Stats().InMsgs >= base+n })
	}
}
