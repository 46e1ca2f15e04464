package garmtool_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// occupancy measures how many handlers are inside at once. Handlers hold
// until release is closed.
type occupancy struct {
	inside, most atomic.Int32
	entered      chan int32 // each entry's count of handlers inside, as it entered
	release      chan struct{}
}

func newOccupancy() *occupancy {
	return &occupancy{entered: make(chan int32, 1024), release: make(chan struct{})}
}

func (o *occupancy) handler(ctx context.Context, req proto.Message) (proto.Message, error) {
	n := o.inside.Add(1)
	defer o.inside.Add(-1)
	for {
		most := o.most.Load()
		if n <= most || o.most.CompareAndSwap(most, n) {
			break
		}
	}
	o.entered <- n
	select {
	case <-o.release:
	case <-ctx.Done():
	}
	return req, nil
}

// publish sends an echo request whose answer goes to inbox.
func publish(t *testing.T, nc *nats.Conn, inbox string) {
	t.Helper()
	value, err := wire.EncodeInvocation(garmtooltest.NewInvocation())
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: echo.Subject, Reply: inbox, Header: nats.Header{wire.InvocationHeader: {value}}}
	if err := nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestWithConcurrencyFourFourHandlersAreInsideAtOnce(t *testing.T) {
	o := newOccupancy()
	h := serve(t, o.handler, garmtool.WithConcurrency(4))
	defer close(o.release)
	ctx := testContext(t)
	inbox := nats.NewInbox()
	// The server picks a queue member at random, so two requests may land on
	// one instance; keep sending until every instance holds one.
	for sent := 0; ; sent++ {
		publish(t, h.Conn(), inbox)
		select {
		case n := <-o.entered:
			if n == 4 {
				if most := o.most.Load(); most != 4 {
					t.Fatalf("%d handlers were inside at once, want at most 4", most)
				}
				return
			}
		case <-ctx.Done():
			t.Fatalf("after %d requests, at most %d handlers were inside at once, want 4", sent, o.most.Load())
		default:
		}
	}
}

func TestWithConcurrencyOneNeverTwoHandlersAreInsideAtOnce(t *testing.T) {
	o := newOccupancy()
	h := serve(t, o.handler, garmtool.WithConcurrency(1))
	ctx := testContext(t)
	const requests = 8
	replies := make(chan *nats.Msg, requests)
	inbox := nats.NewInbox()
	sub, err := h.Conn().ChanSubscribe(inbox, replies)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	received := receivedMore(t, ctx, h.ServiceConn(), requests)
	publish(t, h.Conn(), inbox)
	<-o.entered // one handler holds…
	for range requests - 1 {
		publish(t, h.Conn(), inbox)
	}
	received() // …while every other request has reached the process.
	close(o.release)
	for i := range requests {
		select {
		case reply := <-replies:
			if code := reply.Header.Get(wire.ErrorCodeHeader); code != "" {
				t.Fatalf("request %d answered %s %s", i, code, reply.Header.Get(wire.ErrorHeader))
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d answers arrived", i, requests)
		}
	}
	if most := o.most.Load(); most != 1 {
		t.Fatalf("%d handlers were inside at once, want 1", most)
	}
}

func TestConcurrencyIsPerToolNotPerProcess(t *testing.T) {
	// Each tool's handler waits until the other's is inside too: with one
	// request at a time per process, neither would ever return.
	var both sync.WaitGroup
	both.Add(2)
	meet := func(ctx context.Context, req proto.Message) (proto.Message, error) {
		both.Done()
		both.Wait()
		return req, nil
	}
	shout := toolRef("test.v1.Echo", "Shout")
	svc := garmtool.New("test", "1.0.0", garmtool.WithConcurrency(1))
	if err := svc.Endpoint(echo, newString, meet); err != nil {
		t.Fatal(err)
	}
	if err := svc.Endpoint(shout, newString, meet); err != nil {
		t.Fatal(err)
	}
	h := garmtooltest.Start(t, svc)
	ctx := testContext(t)
	errs := make(chan error, 2)
	for _, ref := range []toolbind.ToolRef{echo, shout} {
		go func() {
			errs <- h.Call(ctx, ref, wrapperspb.String("x"), new(wrapperspb.StringValue))
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
