package garmtool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type answer struct {
	value string
	err   error
}

// callAsync calls echo in the background.
func callAsync(t *testing.T, h *garmtooltest.Harness, in string) <-chan answer {
	t.Helper()
	ctx := testContext(t)
	done := make(chan answer, 1)
	go func() {
		var out wrapperspb.StringValue
		err := h.Call(ctx, echo, wrapperspb.String(in), &out)
		done <- answer{out.GetValue(), err}
	}()
	return done
}

func receive[T any](t *testing.T, ctx context.Context, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
		panic("unreachable")
	}
}

func TestARunningHandlerFinishesAfterRunIsCancelled(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	cancelled := make(chan error, 1)
	h := serve(t, func(ctx context.Context, _ proto.Message) (proto.Message, error) {
		close(entered)
		<-release
		cancelled <- ctx.Err()
		return wrapperspb.String("finished"), nil
	})
	ctx := testContext(t)
	call := callAsync(t, h, "x")
	receive(t, ctx, entered, "the handler to start")

	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	waitOffTheBus(t, ctx, h.Conn(), wire.ServiceName(echo.Service))
	select {
	case <-h.Done():
		t.Fatal("Run returned while a handler was still running")
	default:
	}
	close(release)

	if got := receive(t, ctx, call, "the answer"); got.err != nil || got.value != "finished" {
		t.Fatalf("the running call answered %q, %v; want it to finish", got.value, got.err)
	}
	if err := receive(t, ctx, cancelled, "the handler's context"); err != nil {
		t.Fatalf("the handler's context was cancelled (%v) within the drain timeout", err)
	}
	if err := receive(t, ctx, stopped, "Run to return"); err != nil {
		t.Fatalf("Run returned %v after a drain", err)
	}
}

func TestARequestDeliveredAfterShutdownBeganGets503(t *testing.T) {
	var reached atomic.Int32
	entered, release := make(chan struct{}, 2), make(chan struct{})
	// One instance, so the second request waits behind the first.
	h := serve(t, func(_ context.Context, req proto.Message) (proto.Message, error) {
		reached.Add(1)
		entered <- struct{}{}
		<-release
		return req, nil
	}, garmtool.WithConcurrency(1))
	ctx := testContext(t)
	first := callAsync(t, h, "first")
	receive(t, ctx, entered, "the first handler to start")
	received := receivedMore(t, ctx, h.ServiceConn(), 1)
	second := callAsync(t, h, "second")
	received() // the second request is in the process, queued behind the first

	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	waitOffTheBus(t, ctx, h.Conn(), wire.ServiceName(echo.Service))
	close(release)

	if got := receive(t, ctx, first, "the first answer"); got.err != nil || got.value != "first" {
		t.Fatalf("the first call answered %q, %v", got.value, got.err)
	}
	wantAnswer(t, receive(t, ctx, second, "the second answer").err, "503", "shutting down")
	if n := reached.Load(); n != 1 {
		t.Fatalf("the handler was reached %d times, want once", n)
	}
	if err := receive(t, ctx, stopped, "Run to return"); err != nil {
		t.Fatal(err)
	}
}

// A request whose deadline has passed, delivered while the service shuts
// down, is answered 503 (shutting down), not 429 (queued past its
// deadline): design 5.3 checks the gate before the deadline, so a caller
// retries on another instance instead of being told it was too slow.
func TestShuttingDownIsAnsweredBeforeAPassedDeadline(t *testing.T) {
	var reached atomic.Int32
	entered, release := make(chan struct{}, 2), make(chan struct{})
	h := serve(t, func(_ context.Context, req proto.Message) (proto.Message, error) {
		reached.Add(1)
		entered <- struct{}{}
		<-release
		return req, nil
	}, garmtool.WithConcurrency(1))
	ctx := testContext(t)
	first := callAsync(t, h, "first")
	receive(t, ctx, entered, "the first handler to start")
	received := receivedMore(t, ctx, h.ServiceConn(), 1)
	late := make(chan error, 1)
	go func() {
		var out wrapperspb.StringValue
		late <- h.Call(ctx, echo, wrapperspb.String("late"), &out, garmtooltest.WithDeadline(time.Now().Add(-time.Hour)))
	}()
	received() // queued behind the first, its deadline long gone

	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop() }()
	waitOffTheBus(t, ctx, h.Conn(), wire.ServiceName(echo.Service))
	close(release)

	if got := receive(t, ctx, first, "the first answer"); got.err != nil || got.value != "first" {
		t.Fatalf("the first call answered %q, %v", got.value, got.err)
	}
	wantAnswer(t, receive(t, ctx, late, "the late answer"), "503", "shutting down")
	if n := reached.Load(); n != 1 {
		t.Fatalf("the handler was reached %d times, want once", n)
	}
	if err := receive(t, ctx, stopped, "Run to return"); err != nil {
		t.Fatal(err)
	}
}

type runValue struct{}

func TestTheHandlersContextIsCancelledOnlyAfterTheDrainTimeout(t *testing.T) {
	const drain = 200 * time.Millisecond
	type ended struct {
		at    time.Time
		cause error
		inv   *toolv1.InvocationContext
		value any
	}
	entered, got := make(chan struct{}), make(chan ended, 1)
	svc := garmtool.New("test", "1.0.0", garmtool.WithDrainTimeout(drain))
	if err := svc.Endpoint(echo, newString, func(ctx context.Context, _ proto.Message) (proto.Message, error) {
		close(entered)
		<-ctx.Done()
		got <- ended{time.Now(), context.Cause(ctx), wire.InvocationFrom(ctx), ctx.Value(runValue{})}
		return nil, ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	server := garmtooltest.StartServer(t)
	serviceConn, callerConn := connect(t, server.URL()), connect(t, server.URL())
	ctx := testContext(t)
	runCtx, stop := context.WithCancel(context.WithValue(ctx, runValue{}, "kept"))
	defer stop()
	stopped := make(chan error, 1)
	go func() { stopped <- svc.Run(runCtx, serviceConn) }()
	receive(t, ctx, svc.Ready(), "the service to be ready")
	call := make(chan error, 1)
	go func() {
		call <- garmtooltest.Call(ctx, callerConn, echo, wrapperspb.String("x"), new(wrapperspb.StringValue))
	}()
	receive(t, ctx, entered, "the handler to start")

	began := time.Now()
	stop()
	e := receive(t, ctx, got, "the handler's context to end")
	if waited := e.at.Sub(began); waited < drain {
		t.Fatalf("the handler's context ended %v after shutdown began, before the drain timeout of %v", waited, drain)
	}
	if !errors.Is(e.cause, garmtool.ErrDrainTimeout) {
		t.Fatalf("the handler's context ended because of %v, want the drain timeout", e.cause)
	}
	if e.inv == nil || e.value != "kept" {
		t.Fatalf("the drained context lost its values: invocation %v, Run's value %v", e.inv, e.value)
	}
	wantAnswer(t, receive(t, ctx, call, "the answer"), "500", "context canceled")
	if err := receive(t, ctx, stopped, "Run to return"); err != nil {
		t.Fatal(err)
	}
}

func TestRunReturnsWhenItsConnectionClosesAndSaysSo(t *testing.T) {
	svc := garmtool.New("test", "1.0.0")
	if err := svc.Endpoint(echo, newString, echoing); err != nil {
		t.Fatal(err)
	}
	server := garmtooltest.StartServer(t)
	nc := connect(t, server.URL())
	ctx := testContext(t)
	stopped := make(chan error, 1)
	go func() { stopped <- svc.Run(ctx, nc) }()
	receive(t, ctx, svc.Ready(), "the service to be ready")
	nc.Close()
	if err := receive(t, ctx, stopped, "Run to return"); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Fatalf("Run returned %v, want the connection closed", err)
	}
}
