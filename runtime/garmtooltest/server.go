package garmtooltest

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startTimeout bounds how long starting a server or a service may take.
const startTimeout = 10 * time.Second

// host is the only interface a Server listens on.
const host = "127.0.0.1"

// Server is an embedded NATS server listening on a random loopback port,
// with JetStream when NewJetStreamServer or StartJetStream started it.
type Server struct {
	mu         sync.Mutex
	srv        *server.Server // nil while stopped
	port       int            // picked by the first start, bound again by every later one
	storeDir   string         // the JetStream store; "" for a server without JetStream
	maxPayload int32          // 0 for the NATS server's default
}

// NewServer starts an embedded NATS server on 127.0.0.1 on a port the
// operating system picks, with no monitoring listener, no clustering, no
// JetStream and no logging. Close stops it.
func NewServer() (*Server, error) {
	return newServer(&Server{port: server.RANDOM_PORT})
}

func newServer(s *Server) (*Server, error) {
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// start starts the server on s.port and pins the port it bound; the caller
// holds s.mu or has not shared s yet.
func (s *Server) start() error {
	srv, err := server.NewServer(&server.Options{
		ServerName: "garmtooltest",
		Host:       host,
		Port:       s.port,
		JetStream:  s.storeDir != "",
		StoreDir:   s.storeDir,
		MaxPayload: s.maxPayload,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		return err
	}
	go srv.Start()
	if !srv.ReadyForConnections(startTimeout) {
		srv.Shutdown()
		return errors.New("garmtooltest: the embedded NATS server did not accept connections within " + startTimeout.String())
	}
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
	return nil
}

// stop shuts the server down and waits until it has; the caller holds s.mu.
func (s *Server) stop() {
	if s.srv == nil {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	s.srv = nil
}

// Restart stops the server, dropping every connection, and starts it again
// on the same port at once, as a bus restart would; clients that reconnect
// find it. A plain server comes back empty: nothing of the old one's state
// survives. A JetStream server comes back on the same store, with every
// stream and bucket it held, as a real server's would.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
	if err := s.start(); err != nil {
		return fmt.Errorf("garmtooltest: restarting the server on port %d: %w", s.port, err)
	}
	return nil
}

// Stop stops the server, dropping every connection, and waits until it has,
// for a test that makes calls while the server is gone; Start brings it
// back. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop()
}

// Start starts a stopped server again on the same port (and store), as
// Restart would. Starting a running server is an error.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return fmt.Errorf("garmtooltest: the server on port %d is already running", s.port)
	}
	if err := s.start(); err != nil {
		return fmt.Errorf("garmtooltest: starting the server again on port %d: %w", s.port, err)
	}
	return nil
}

// StartServer starts a Server for the test and stops it when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// URL is the nats:// URL clients connect to. It does not change across
// Stop, Start and Restart, and answers while the server is stopped.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(s.port))
}

// Close stops the server and waits until it has; closing a stopped server
// does nothing.
func (s *Server) Close() { s.Stop() }
