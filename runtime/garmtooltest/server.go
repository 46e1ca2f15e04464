package garmtooltest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// startTimeout bounds how long starting a server or a service may take.
const startTimeout = 10 * time.Second

// Server is an embedded NATS server listening on a random loopback port.
type Server struct {
	mu  sync.Mutex
	srv *server.Server
}

// NewServer starts an embedded NATS server on 127.0.0.1 on a port the
// operating system picks, with no monitoring listener, no clustering and no
// logging. Close stops it.
func NewServer() (*Server, error) {
	srv, err := startServer(server.RANDOM_PORT)
	if err != nil {
		return nil, err
	}
	return &Server{srv: srv}, nil
}

func startServer(port int) (*server.Server, error) {
	srv, err := server.NewServer(&server.Options{
		ServerName: "garmtooltest",
		Host:       "127.0.0.1",
		Port:       port,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		return nil, err
	}
	go srv.Start()
	if !srv.ReadyForConnections(startTimeout) {
		srv.Shutdown()
		return nil, errors.New("garmtooltest: the embedded NATS server did not accept connections within " + startTimeout.String())
	}
	return srv, nil
}

// Restart stops the server, dropping every connection, and starts a fresh
// one on the same port, as a bus restart would. Clients that reconnect find
// it; nothing of the old server's state survives.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	port := s.srv.Addr().(*net.TCPAddr).Port
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
	srv, err := startServer(port)
	if err != nil {
		return fmt.Errorf("garmtooltest: restarting the server on port %d: %w", port, err)
	}
	s.srv = srv
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

// URL is the nats:// URL clients connect to; it survives a Restart.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.ClientURL()
}

// Close stops the server and waits until it has.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}
