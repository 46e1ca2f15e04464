package approvals

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ServeConfig is a [Config] and what a process of its own needs besides: where to listen and
// the bus holding the requests and the audit stream.
type ServeConfig struct {
	Config
	// Listen is the HTTP listener's address (--listen).
	Listen string
	// Bus is how the service reaches the bus: its URL or a comma-separated seed list (--nats),
	// the approvals identity's credentials (--nats-creds, --nats-nkey or --nats-user-file; its
	// permissions let it read and decide requests and write audit rows, nothing else) and TLS
	// (--nats-tls-ca, --nats-tls-cert, --nats-tls-key): the connection flags garmd takes.
	Bus garmtool.BusFlags
	// NATSInboxPrefix is the prefix of its reply subjects (--nats-inbox-prefix), the one its
	// identity may subscribe under. Default [DefaultInboxPrefix].
	NATSInboxPrefix string
}

// DefaultInboxPrefix is the reply prefix of the approvals service's bus identity as
// garm-catalogue nats-permissions derives it.
const DefaultInboxPrefix = "_INBOX.approvals"

// DefaultListen is the listener of `garm-approvals` unless --listen says otherwise.
const DefaultListen = "127.0.0.1:7443"

// Validate reports every problem of the configuration at once.
func (c ServeConfig) Validate() error {
	problems := []error{c.Config.Validate()}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		problems = append(problems, fmt.Errorf("--listen %q: not host:port", c.Listen))
	}
	if strings.TrimSpace(strings.ReplaceAll(c.Bus.URL, ",", "")) == "" {
		problems = append(problems, errors.New("--nats: no bus named"))
	}
	if _, err := c.Bus.ConnectOptions(); err != nil {
		problems = append(problems, err)
	}
	return errors.Join(problems...)
}

// shutdownTimeout bounds how long requests in flight may finish at shutdown.
const shutdownTimeout = 10 * time.Second

// Serve runs the service until ctx ends: it connects to the bus, opens the pending bucket and
// GARM_AUDIT (it creates neither: garmd's operator does), discovers the identity provider, and
// serves HTTP on Listen. ready, when not nil, is called with the bound address once serving.
func Serve(ctx context.Context, c ServeConfig, ready func(net.Addr)) error {
	if err := c.Validate(); err != nil {
		return err
	}
	inbox := c.NATSInboxPrefix
	if inbox == "" {
		inbox = DefaultInboxPrefix
	}
	secured, err := c.Bus.ConnectOptions()
	if err != nil {
		return err
	}
	opts := append([]nats.Option{nats.Name("garm-approvals"), nats.MaxReconnects(-1), nats.CustomInboxPrefix(inbox)}, secured...)
	nc, err := nats.Connect(c.Bus.URL, opts...)
	if err != nil {
		return fmt.Errorf("--nats (authenticating with %s): %w", c.Bus.Authentication(), err)
	}
	defer nc.Close()
	if c.Logger != nil {
		c.Logger.Info("garm-approvals: bus", "auth", c.Bus.Authentication(), "tls", busTLS(nc))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	store, err := pending.Open(ctx, js)
	if err != nil {
		return fmt.Errorf("the approvals bucket: %w", err)
	}
	svc, err := New(ctx, c.Config, store, NewAuditStream(js))
	if err != nil {
		return err
	}
	svc.SetFeed(NewNotifyStream(js))
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// busTLS says whether the bus connection is encrypted, for the start-up log line.
func busTLS(nc *nats.Conn) string {
	state, err := nc.TLSConnectionState()
	if err != nil {
		return "off: the bus connection is not encrypted (tls:// or --nats-tls-ca turns it on)"
	}
	return fmt.Sprintf("on (TLS 1.%d)", state.Version-0x0301)
}
