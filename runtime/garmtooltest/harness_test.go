package garmtooltest_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var echo = toolbind.ToolRef{
	FQN: "test.v1.echo", Subject: "test.v1.Echo.Echo", Method: "/test.v1.Echo/Echo", Service: "test.v1.Echo",
	ContractVersion: "1.0.0", DescriptorHash: strings.Repeat("a", 64),
}

// start serves echo with h.
func start(t *testing.T, h toolbind.Handler) *garmtooltest.Harness {
	t.Helper()
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, func() proto.Message { return new(wrapperspb.StringValue) }, h); err != nil {
		t.Fatal(err)
	}
	return garmtooltest.Start(t, svc)
}

func testContext(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

func TestCallReturnsTheToolsResponse(t *testing.T) {
	h := start(t, func(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil })
	var out wrapperspb.StringValue
	if err := h.Call(testContext(t, 10*time.Second), echo, wrapperspb.String("hi"), &out); err != nil || out.GetValue() != "hi" {
		t.Fatalf("Call = %q, %v", out.GetValue(), err)
	}
}

func TestCallCarriesAnInvocationLikeGarmdsWithDefaultsTheTestCanShape(t *testing.T) {
	seen := make(chan *toolv1.InvocationContext, 2)
	h := start(t, func(ctx context.Context, req proto.Message) (proto.Message, error) {
		seen <- wire.InvocationFrom(ctx)
		return req, nil
	})
	ctx := testContext(t, 5*time.Second)
	ctxDeadline, _ := ctx.Deadline()
	for range 2 {
		if err := h.Call(ctx, echo, wrapperspb.String("x"), new(wrapperspb.StringValue)); err != nil {
			t.Fatal(err)
		}
	}
	first, second := <-seen, <-seen
	if first.GetCallId() == "" || first.GetCallId() == second.GetCallId() {
		t.Errorf("call ids %q and %q, want a fresh one per call", first.GetCallId(), second.GetCallId())
	}
	if first.GetAttribution().GetTenant() != garmtooltest.DefaultTenant ||
		first.GetPrincipal().GetSubject() != garmtooltest.DefaultPrincipal ||
		first.GetPrincipal().GetKind() != toolv1.PrincipalKind_PRINCIPAL_KIND_USER {
		t.Errorf("default invocation %v", first)
	}
	if !first.GetDeadline().AsTime().Equal(ctxDeadline) {
		t.Errorf("deadline %v, want the context's (sooner than the default) %v", first.GetDeadline().AsTime(), ctxDeadline)
	}

	if err := h.Call(ctx, echo, wrapperspb.String("x"), new(wrapperspb.StringValue),
		garmtooltest.WithCallID("evt-1"), garmtooltest.WithTenant("acme"),
		garmtooltest.WithPrincipal("agent:bot", toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT),
		garmtooltest.WithInvocation(func(inv *toolv1.InvocationContext) { inv.GrantJti = "jti-9" })); err != nil {
		t.Fatal(err)
	}
	shaped := <-seen
	if shaped.GetCallId() != "evt-1" || shaped.GetAttribution().GetTenant() != "acme" ||
		shaped.GetPrincipal().GetSubject() != "agent:bot" || shaped.GetGrantJti() != "jti-9" {
		t.Errorf("shaped invocation %v", shaped)
	}
}

func TestCallReturnsAnErrorAnswerAsACodedError(t *testing.T) {
	h := start(t, func(context.Context, proto.Message) (proto.Message, error) {
		return nil, toolbind.Forbidden("not for you")
	})
	err := h.Call(testContext(t, 10*time.Second), echo, wrapperspb.String("x"), new(wrapperspb.StringValue))
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != "403" || coded.Message != "not for you" {
		t.Fatalf("Call = %v, want 403 not for you", err)
	}
}

func TestCallReportsAToolNobodyServesAsNoResponders(t *testing.T) {
	h := start(t, func(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil })
	missing := echo
	missing.Method = "/test.v1.Echo/Missing"
	err := h.Call(testContext(t, 10*time.Second), missing, wrapperspb.String("x"), new(wrapperspb.StringValue))
	var coded *toolbind.CodedError
	if !errors.Is(err, nats.ErrNoResponders) || errors.As(err, &coded) {
		t.Fatalf("Call = %v, want no responders and no coded answer", err)
	}
}

func TestAnAnswerThatDoesNotUnmarshalIsAnError(t *testing.T) {
	err := garmtooltest.Answer(&nats.Msg{Data: []byte{0xff, 0xff}}, new(wrapperspb.StringValue))
	var coded *toolbind.CodedError
	if err == nil || errors.As(err, &coded) {
		t.Fatalf("Answer = %v, want an error that is not a coded answer", err)
	}
}

func TestNewRefusesAServiceThatCannotStart(t *testing.T) {
	h, err := garmtooltest.New(garmtool.New("test", "1.0.0"))
	if h != nil || err == nil || !strings.Contains(err.Error(), "no tools to serve") {
		t.Fatalf("New = %v, %v; want the service's refusal", h, err)
	}
}

func TestStopDrainsTheServiceAndTheHarnessStillCloses(t *testing.T) {
	h := start(t, func(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil })
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Stop returned before Run")
	}
	err := h.Call(testContext(t, 10*time.Second), echo, wrapperspb.String("x"), new(wrapperspb.StringValue))
	if !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("a call after Stop: %v, want no responders", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTheServerListensOnLoopbackOnly(t *testing.T) {
	s := garmtooltest.StartServer(t)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "4222" {
		t.Fatalf("server at %s, want 127.0.0.1 on a random port", s.URL())
	}
}

func TestWantRefusalAcceptsOnlyTheRefusalAsked(t *testing.T) {
	ft := &fakeT{TB: t}
	garmtooltest.WantRefusal(ft, toolbind.NotFound("no such thing"), toolbind.CodeNotFound)
	if ft.failed {
		t.Fatal("a 404 refusal was not accepted as one")
	}
	for _, err := range []error{nil, errors.New("plain"), toolbind.Conflict("busy")} {
		ft := &fakeT{TB: t}
		garmtooltest.WantRefusal(ft, err, toolbind.CodeNotFound)
		if !ft.failed {
			t.Errorf("%v was accepted as a 404 refusal", err)
		}
	}
}

// fakeT records a Fatalf instead of ending the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

// A test that sends a tool another tool's request reads which tool refused
// which request, and still finds the refusal with errors.As.
func TestARefusalNamesTheToolAndTheRequestSent(t *testing.T) {
	t.Parallel()
	h := start(t, func(_ context.Context, req proto.Message) (proto.Message, error) { return req, nil })
	var out wrapperspb.StringValue
	err := h.Call(testContext(t, 10*time.Second), echo, wrapperspb.Int64(7), &out)
	var coded *toolbind.CodedError
	if !errors.As(err, &coded) || coded.Code != "400" {
		t.Fatalf("got %v, want a 400 refusal", err)
	}
	if !strings.Contains(err.Error(), "test.v1.echo answered a google.protobuf.Int64Value with: request does not match the contract") {
		t.Errorf("the error does not name the tool and the request sent: %v", err)
	}
}
