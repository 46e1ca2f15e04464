package idp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/garm-dev/garm/internal/loopback"
)

// readHeaderTimeout bounds how long a client may take to send its request headers.
const readHeaderTimeout = 10 * time.Second

// Server is an [IdP] listening on a loopback address.
type Server struct {
	listener net.Listener
	http     *http.Server
	served   chan error // receives Serve's result once

	finishOnce sync.Once
	serveErr   error
}

// Start listens on addr and serves [IdP.Handler] until [Server.Shutdown] or [Server.Close],
// behind the dev plane's [loopback.Guard]: a request addressed to a host other than loopback (a
// page whose name was rebound to 127.0.0.1) and a cross-origin POST are refused. addr must name a loopback host: an IP in 127.0.0.0/8, ::1, or "localhost"; an empty host,
// an unspecified address (0.0.0.0, ::) and any other name are refused before listening, and
// the address actually bound is checked again. Port 0 picks a free port.
func (i *IdP) Start(addr string) (*Server, error) {
	if err := checkLoopbackHost(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("idp: listen: %w", err)
	}
	if err := checkLoopbackAddr(ln.Addr()); err != nil {
		_ = ln.Close()
		return nil, err
	}
	s := &Server{
		listener: ln,
		http: &http.Server{
			Handler:           loopback.Guard(i.handler("http://" + ln.Addr().String())),
			ReadHeaderTimeout: readHeaderTimeout,
			ErrorLog:          slog.NewLogLogger(i.log.Handler(), slog.LevelWarn),
		},
		served: make(chan error, 1),
	}
	go func() { s.served <- s.http.Serve(ln) }()
	return s, nil
}

// checkLoopbackHost refuses an address whose host is not a literal loopback IP or "localhost".
// Names other than localhost are not resolved: what a name means can change after the check.
func checkLoopbackHost(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("idp: address %q: %w", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("idp: refusing to listen on %q: the dev identity provider listens on loopback only", addr)
}

// checkLoopbackAddr refuses a bound address that is not loopback ("localhost" may resolve to
// anything the host's resolver says).
func checkLoopbackAddr(a net.Addr) error {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsLoopback() {
		return fmt.Errorf("idp: refusing to serve on %s: not a loopback address", a)
	}
	return nil
}

// Addr is the address the server is bound to.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// URL is the server's base URL, http://host:port, with no trailing slash.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// JWKSURL is the URL of the key set garmd is given for the IdP's issuer.
func (s *Server) JWKSURL() string { return s.URL() + JWKSPath }

// Shutdown stops accepting connections and waits, bounded by ctx, for requests in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.finish(s.http.Shutdown(ctx))
}

// Close stops the server at once, dropping requests in flight.
func (s *Server) Close() error {
	return s.finish(s.http.Close())
}

// finish waits for Serve to return (stopping the server closes its listener, so it does) and
// joins an unexpected Serve error to the stop error.
func (s *Server) finish(stopErr error) error {
	s.finishOnce.Do(func() {
		if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
			s.serveErr = err
		}
	})
	return errors.Join(stopErr, s.serveErr)
}
