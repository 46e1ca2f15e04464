package garmtooltest

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// reconnectWait is how long a ConnectJetStream client waits between
// attempts to reach a server that is gone.
const reconnectWait = 20 * time.Millisecond

// A ServerOption shapes a JetStream server beyond NewJetStreamServer's
// defaults.
type ServerOption func(*Server)

// WithMaxPayload sets the largest message the server accepts, in bytes, in
// place of the NATS server's default: for testing a client against a server
// configured smaller.
func WithMaxPayload(bytes int32) ServerOption {
	return func(s *Server) { s.maxPayload = bytes }
}

// NewJetStreamServer starts an embedded NATS server as NewServer does, with
// JetStream on, keeping its store under storeDir. Its streams and buckets
// survive Restart, and Stop and Start, as a real server's would. Close
// stops it; storeDir is left for the caller to remove.
func NewJetStreamServer(storeDir string, opts ...ServerOption) (*Server, error) {
	if storeDir == "" {
		return nil, errors.New("garmtooltest: a JetStream server needs a store directory")
	}
	s := &Server{port: server.RANDOM_PORT, storeDir: storeDir}
	for _, opt := range opts {
		if opt != nil {
			opt(s)
		}
	}
	return newServer(s)
}

// StartJetStream starts a JetStream server for the test, its store in a
// directory of the test's, and stops it when the test ends.
func StartJetStream(t testing.TB, opts ...ServerOption) *Server {
	t.Helper()
	s, err := NewJetStreamServer(t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// ConnectJetStream connects to the server at url and returns the connection
// and a JetStream client on it, both closed when the test ends. The
// connection reconnects without limit, quickly, so a test that stops or
// restarts the server finds it again.
func ConnectJetStream(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, nats.Name("garmtooltest jetstream"), nats.MaxReconnects(-1), nats.ReconnectWait(reconnectWait))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
