package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// The admin server's limits. Probes and scrapes are small and quick; these
// keep a slow or idle client from holding a connection open.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	// writeTimeout outlasts Prometheus's default 10s scrape timeout.
	writeTimeout   = 30 * time.Second
	idleTimeout    = 60 * time.Second
	maxHeaderBytes = 16 << 10
	// ShutdownTimeout bounds Serve's graceful shutdown; connections still
	// open after it are closed.
	ShutdownTimeout = 5 * time.Second
)

// Listen opens the admin listener on addr (host:port). An address with no
// host would listen on every interface; it is refused, so binding beyond
// loopback is always written out. Any other address is allowed: see
// IsLoopback.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("admin listen address %q: %w", addr, err)
	}
	if host == "" {
		return nil, fmt.Errorf("admin listen address %q names no host: write the interface to bind, such as 127.0.0.1 or 0.0.0.0", addr)
	}
	return net.Listen("tcp", addr)
}

// IsLoopback reports whether the listener's bound address is reachable only
// from this host. garmd warns when its admin listener is not.
func IsLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// Serve serves h on l until ctx is done, then shuts down gracefully within
// ShutdownTimeout. It returns nil after a shutdown that ctx asked for, or
// the error that stopped serving otherwise. l is closed when Serve returns.
func Serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
