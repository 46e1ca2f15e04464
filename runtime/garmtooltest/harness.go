package garmtooltest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/toolbind"
	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
)

// CloseTimeout bounds how long Close waits for the service to drain; a
// handler that ignores its context for longer makes Close report it.
const CloseTimeout = time.Minute

// Harness is a Service under test, served on its own embedded NATS server.
type Harness struct {
	server      *Server
	svc         *garmtool.Service
	serviceConn *nats.Conn
	conn        *nats.Conn

	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned
	runErr error         // Run's result, set before done closes

	closeOnce sync.Once
	closeErr  error
}

// New starts an embedded NATS server, runs svc on it (on a connection of its
// own) and returns once svc is ready, with a second connection for calls.
// Register svc's tools first. Close stops everything.
func New(svc *garmtool.Service) (*Harness, error) {
	server, err := NewServer()
	if err != nil {
		return nil, err
	}
	h := &Harness{server: server, svc: svc, done: make(chan struct{})}
	if h.serviceConn, err = nats.Connect(server.URL(), nats.Name("garmtooltest service")); err != nil {
		h.closeConnections()
		return nil, fmt.Errorf("garmtooltest: connecting the service: %w", err)
	}
	if h.conn, err = nats.Connect(server.URL(), nats.Name("garmtooltest caller")); err != nil {
		h.closeConnections()
		return nil, fmt.Errorf("garmtooltest: connecting the caller: %w", err)
	}
	var ctx context.Context
	ctx, h.cancel = context.WithCancel(context.Background())
	go func() {
		h.runErr = svc.Run(ctx, h.serviceConn)
		close(h.done)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-svc.Ready():
		return h, nil
	case <-h.done:
		h.closeConnections()
		return nil, fmt.Errorf("garmtooltest: the service did not start: %w", h.runErr)
	case <-timer.C:
		err := h.Close()
		return nil, errors.Join(fmt.Errorf("garmtooltest: the service was not ready within %s", startTimeout), err)
	}
}

// Start is New for a test: it fails the test if svc does not start, and
// closes the harness when the test ends, failing the test if the service
// does not stop cleanly.
func Start(t testing.TB, svc *garmtool.Service) *Harness {
	t.Helper()
	h, err := New(svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("garmtooltest: closing the harness: %v", err)
		}
	})
	return h
}

// Call calls a tool of the service the way garmd does (see the package-level
// Call) and returns nil with resp filled, a *toolbind.CodedError for an error
// answer, or another error.
func (h *Harness) Call(ctx context.Context, ref toolbind.ToolRef, req, resp proto.Message, opts ...CallOption) error {
	return Call(ctx, h.conn, ref, req, resp, opts...)
}

// URL is the embedded server's URL.
func (h *Harness) URL() string { return h.server.URL() }

// Conn is the callers' connection, for requests Call would not send.
func (h *Harness) Conn() *nats.Conn { return h.conn }

// ServiceConn is the connection the service runs on, for observing what
// reached it (its Stats).
func (h *Harness) ServiceConn() *nats.Conn { return h.serviceConn }

// Stop cancels the service's Run and waits for it to return (for as long as
// its handlers take), returning Run's error. Calling it again returns the
// same.
func (h *Harness) Stop() error {
	h.cancel()
	<-h.done
	return h.runErr
}

// Done is closed when the service's Run has returned.
func (h *Harness) Done() <-chan struct{} { return h.done }

// Close stops the service (waiting at most CloseTimeout), closes both
// connections and stops the server. It returns Run's error, or says that the
// service did not stop in time.
func (h *Harness) Close() error {
	h.closeOnce.Do(func() {
		h.cancel()
		timer := time.NewTimer(CloseTimeout)
		defer timer.Stop()
		select {
		case <-h.done:
			h.closeErr = h.runErr
		case <-timer.C:
			h.closeErr = fmt.Errorf("garmtooltest: the service did not stop within %s; a handler ignores its context", CloseTimeout)
		}
		h.closeConnections()
	})
	return h.closeErr
}

func (h *Harness) closeConnections() {
	for _, nc := range []*nats.Conn{h.conn, h.serviceConn} {
		if nc != nil {
			nc.Close()
		}
	}
	h.server.Close()
}
