package busoutcome_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/busoutcome"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestWhatAFailedWriteSaysAboutWhetherItHappened(t *testing.T) {
	for _, c := range []struct {
		err        error
		notWritten bool
	}{
		{nil, false},
		{nats.ErrReconnectBufExceeded, true},
		{fmt.Errorf("publish: %w", nats.ErrConnectionClosed), true},
		{nats.ErrNoResponders, true},
		{jetstream.ErrNoStreamResponse, true},
		{context.DeadlineExceeded, false},
		{nats.ErrTimeout, false},
		{errors.New("anything else"), false},
	} {
		if got := busoutcome.NotWritten(c.err); got != c.notWritten {
			t.Errorf("NotWritten(%v) = %v", c.err, got)
		}
	}
}

// TestAWriteWhileTheBusIsAwayIsDefinitelyNotWritten pins the connection
// option the classification relies on: without a reconnect buffer, a
// publish made while the server is gone fails at once, definitely, and is
// not applied when the server comes back.
func TestAWriteWhileTheBusIsAwayIsDefinitelyNotWritten(t *testing.T) {
	srv := garmtooltest.StartJetStream(t)
	reconnected, disconnected := make(chan struct{}, 1), make(chan struct{}, 1)
	nc, err := nats.Connect(srv.URL(), nats.ReconnectBufSize(-1), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { disconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	select {
	case <-disconnected:
	case <-ctx.Done():
		t.Fatal("the client never noticed the server was gone")
	}
	_, err = js.Publish(ctx, "s.one", []byte("while away"))
	if !busoutcome.NotWritten(err) {
		t.Fatalf("a publish while the bus is away: %v, not definitely unwritten", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("no reconnect")
	}
	// A marker written after the reconnect: anything the client had held
	// back would be on the stream before it.
	if _, err := js.Publish(ctx, "s.two", []byte("after")); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the stream holds %d messages: the write made while away was applied later", info.State.Msgs)
	}
}
