package natsbus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/garm-dev/garm/daemon/internal/transport"
	"github.com/garm-dev/garm/daemon/internal/transport/natsbus"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

// A request waits for its reply until its deadline or its context's end,
// whichever comes first, whether or not the context can end: the chain's
// cannot, and then the deadline alone bounds the wait.
func TestARequestWaitsUntilItsDeadlineOrItsContextsEnd(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// A tool that takes every request and never answers.
	if _, err := nc.Subscribe("t.v1.Silent.Call", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe("t.v1.Echo.Call", func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r := natsbus.New(nc)
	request := func(ctx context.Context, subject string, deadline time.Time) (*transport.Reply, error, time.Duration) {
		start := time.Now()
		reply, err := r.Request(ctx, &transport.Request{Subject: subject, Invocation: "inv", Body: []byte("ping"), Deadline: deadline})
		return reply, err, time.Since(start)
	}
	const wait = 150 * time.Millisecond

	for _, c := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"a context that cannot end", func() (context.Context, context.CancelFunc) {
			return context.WithoutCancel(context.Background()), func() {}
		}},
		{"a context that can end", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	} {
		ctx, cancel := c.ctx()
		reply, err, _ := request(ctx, "t.v1.Echo.Call", time.Now().Add(5*time.Second))
		if err != nil || string(reply.Body) != "ping" {
			t.Errorf("%s: an answered request: %v, %+v", c.name, err, reply)
		}
		_, err, took := request(ctx, "t.v1.Silent.Call", time.Now().Add(wait))
		if !errors.Is(err, transport.ErrTimeout) {
			t.Errorf("%s: an unanswered request ended with %v, want ErrTimeout", c.name, err)
		}
		if took < wait-10*time.Millisecond || took > 10*wait {
			t.Errorf("%s: an unanswered request waited %v for a deadline %v away", c.name, took, wait)
		}
		_, err, took = request(ctx, "t.v1.Echo.Call", time.Now().Add(-time.Millisecond))
		if !errors.Is(err, transport.ErrTimeout) {
			t.Errorf("%s: a request past its deadline ended with %v, want ErrTimeout", c.name, err)
		}
		if took > wait {
			t.Errorf("%s: a request past its deadline waited %v", c.name, took)
		}
		_, err, _ = request(ctx, "t.v1.Nobody.Call", time.Now().Add(5*time.Second))
		if !errors.Is(err, transport.ErrNoResponders) {
			t.Errorf("%s: a request nobody serves ended with %v, want ErrNoResponders", c.name, err)
		}
		cancel()
	}

	// A context that ends before the deadline ends the wait.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(wait, cancel)
	_, err, took := request(ctx, "t.v1.Silent.Call", time.Now().Add(time.Minute))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled request ended with %v, want context.Canceled", err)
	}
	if took > 10*wait {
		t.Errorf("a cancelled request waited %v", took)
	}
}

// Closing the connection ends the requests waiting on it: their replies
// cannot come.
func TestClosingTheConnectionEndsTheRequestsWaiting(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	tool, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tool.Close)
	if _, err := tool.Subscribe("t.v1.Silent.Call", func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := tool.Flush(); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r := natsbus.New(nc)
	ended := make(chan error, 1)
	go func() {
		_, err := r.Request(context.WithoutCancel(context.Background()),
			&transport.Request{Subject: "t.v1.Silent.Call", Invocation: "inv", Deadline: time.Now().Add(30 * time.Second)})
		ended <- err
	}()
	// The request is waiting once the tool has it.
	for tool.Stats().InMsgs == 0 {
		time.Sleep(time.Millisecond)
	}
	nc.Close()
	if err := <-ended; !errors.Is(err, transport.ErrNotConnected) {
		t.Errorf("a request waiting when the connection closed ended with %v, want ErrNotConnected", err)
	}
}
