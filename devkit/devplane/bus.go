package devplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// SpentGrantTTL is how long GARM_GRANTS_SPENT keeps a spent grant: well
// beyond the longest grant age the example catalogue declares plus garmd's
// grant skew, which garmd checks at startup.
const SpentGrantTTL = time.Hour

// busReadyTimeout bounds how long the embedded server may take to accept
// connections and shut down.
const busReadyTimeout = 10 * time.Second

// bus is the embedded NATS server with JetStream.
type bus struct {
	srv  *server.Server
	opts *server.Options
	url  string
}

// startBus starts the embedded NATS server on addr (a loopback host:port;
// port 0 picks a free one), with JetStream keeping its store in storeDir,
// admitting only users, each with its permissions.
func startBus(addr, storeDir string, users []*server.NkeyUser) (*bus, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %s: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %s: the port is not a number", addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default port
	} else if l, err := net.Listen("tcp", addr); err != nil {
		// The embedded server reports a taken port only by never becoming
		// ready; say so at once.
		return nil, fmt.Errorf("--nats-listen: %w", err)
	} else {
		l.Close()
	}
	opts := &server.Options{
		ServerName: "garm-dev",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   storeDir,
		NoLog:      true,
		NoSigs:     true,
		Nkeys:      users,
	}
	srv, err := server.NewServer(opts.Clone())
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(busReadyTimeout) {
		srv.Shutdown()
		return nil, fmt.Errorf("--nats-listen %s: the embedded NATS server did not accept connections within %s (is the port taken?)", addr, busReadyTimeout)
	}
	b := &bus{srv: srv, opts: opts}
	bound, ok := srv.Addr().(*net.TCPAddr)
	if !ok || !bound.IP.IsLoopback() {
		b.close()
		return nil, fmt.Errorf("--nats-listen %s: bound %v, which is not loopback", addr, srv.Addr())
	}
	b.url = "nats://" + bound.String()
	return b, nil
}

// admit replaces the users the server admits, and their permissions, as a
// configuration reload would: connections of users still admitted stay.
func (b *bus) admit(users []*server.NkeyUser) error {
	opts := b.opts.Clone()
	opts.Nkeys = users
	opts.Port = b.srv.Addr().(*net.TCPAddr).Port
	if err := b.srv.ReloadOptions(opts); err != nil {
		return fmt.Errorf("the bus's users: %w", err)
	}
	b.opts = opts
	return nil
}

// close shuts the server down and waits, bounded, until it has.
func (b *bus) close() {
	b.srv.Shutdown()
	done := make(chan struct{})
	go func() { b.srv.WaitForShutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(busReadyTimeout):
	}
}

// connect is a client connection to the bus, named for what uses it and
// authenticated with the nkey seed in seedFile, the way a tool command's
// --nats-nkey flag would.
func (b *bus) connect(name, seedFile string, extra ...nats.Option) (*nats.Conn, error) {
	secured, err := garmtool.BusFlags{URL: b.url, NKey: seedFile}.ConnectOptions()
	if err != nil {
		return nil, fmt.Errorf("connecting %s: %w", name, err)
	}
	opts := append(secured, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))
	nc, err := nats.Connect(b.url, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connecting %s to %s: %w", name, b.url, err)
	}
	return nc, nil
}

// createStreams creates what garmd writes to, as an operator would (SPEC
// 7.10): the ledger, audit and notify streams and the spent-grant bucket.
// Each is created or brought to this configuration, so a reused --data
// directory starts the same way a fresh one does.
func createStreams(ctx context.Context, js jetstream.JetStream) error {
	streams := []jetstream.StreamConfig{
		{
			Name:     wire.LedgerStream,
			Subjects: []string{wire.LedgerStreamSubjects},
			Storage:  jetstream.FileStorage,
		},
		{
			// The audit sink asserts indefinite retention: no max age, and a
			// full stream refuses new rows rather than dropping old ones.
			Name:     wire.AuditStream,
			Subjects: []string{wire.AuditStreamSubjects},
			Storage:  jetstream.FileStorage,
			Discard:  jetstream.DiscardNew,
			MaxAge:   0,
		},
		{
			Name:     wire.NotifyStream,
			Subjects: []string{wire.NotifyStreamSubjects},
			Storage:  jetstream.FileStorage,
		},
	}
	var errs []error
	for _, cfg := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			errs = append(errs, fmt.Errorf("creating stream %s: %w", cfg.Name, err))
		}
	}
	// The bucket is created once and fenced; a fenced bucket kept in --data
	// from an earlier run cannot be updated back to a plain one, and need
	// not be.
	if _, err := js.KeyValue(ctx, wire.GrantsSpentBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:  wire.GrantsSpentBucket,
			TTL:     SpentGrantTTL,
			Storage: jetstream.FileStorage,
		}); err != nil {
			errs = append(errs, fmt.Errorf("creating bucket %s: %w", wire.GrantsSpentBucket, err))
		}
	}
	if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
