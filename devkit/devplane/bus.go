package devplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
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

// bus is the embedded NATS server with JetStream, or a cluster of them on
// loopback.
type bus struct {
	nodes []*node
	// url is every node's client URL, a seed list when there are several.
	url string
}

// node is one NATS server: embedded (srv, nil while it is stopped), or,
// when bin is set, a nats-server process (proc) run on a configuration
// file in dir, its output in a log file beside it.
type node struct {
	mu   sync.Mutex
	name string
	opts *server.Options
	srv  *server.Server
	url  string

	bin, dir string
	proc     *child
}

// startBus starts the embedded NATS server on addr (a loopback host:port;
// port 0 picks a free one), with JetStream keeping its store in storeDir,
// admitting only users, each with its permissions.
func startBus(addr, storeDir string, users []*server.NkeyUser) (*bus, error) {
	host, port, err := listenPort(addr)
	if err != nil {
		return nil, err
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
	n := &node{name: opts.ServerName, opts: opts}
	if err := n.start(); err != nil {
		return nil, fmt.Errorf("--nats-listen %s: %w", addr, err)
	}
	return &bus{nodes: []*node{n}, url: n.url}, nil
}

// listenPort checks addr and answers the port to give the embedded server:
// RANDOM_PORT for 0, which nats-server would read as its default port.
func listenPort(addr string) (string, int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("--nats-listen %s: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", 0, fmt.Errorf("--nats-listen %s: the port is not a number", addr)
	}
	if port == 0 {
		return host, server.RANDOM_PORT, nil
	}
	// The embedded server reports a taken port only by never becoming
	// ready; say so at once.
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", 0, fmt.Errorf("--nats-listen: %w", err)
	}
	l.Close()
	return host, port, nil
}

// start starts the node on its options and waits, bounded, until it takes
// connections on loopback.
func (n *node) start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.bin != "" {
		return n.startProcess()
	}
	if n.srv != nil {
		return nil
	}
	srv, err := server.NewServer(n.opts.Clone())
	if err != nil {
		return fmt.Errorf("embedded NATS server %s: %w", n.name, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(busReadyTimeout) {
		srv.Shutdown()
		return fmt.Errorf("the embedded NATS server %s did not accept connections within %s (is the port taken?)", n.name, busReadyTimeout)
	}
	bound, ok := srv.Addr().(*net.TCPAddr)
	if !ok || !bound.IP.IsLoopback() {
		shutdown(srv)
		return fmt.Errorf("the embedded NATS server %s bound %v, which is not loopback", n.name, srv.Addr())
	}
	// A restart binds the same port.
	n.opts.Port = bound.Port
	n.srv, n.url = srv, "nats://"+bound.String()
	return nil
}

// stop shuts the node down and waits, bounded, until it has.
func (n *node) stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	if n.proc != nil {
		err = n.proc.stop(busReadyTimeout)
		n.proc = nil
	}
	if n.srv != nil {
		shutdown(n.srv)
		n.srv = nil
	}
	return err
}

// admit replaces the users the server admits, and their permissions, as a
// configuration reload would: connections of users still admitted stay. A
// stopped node admits them when it starts again.
func (n *node) admit(users []*server.NkeyUser) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	opts := n.opts.Clone()
	opts.Nkeys = users
	if n.bin != "" {
		if err := writeBusConf(n.confPath(), opts); err != nil {
			return fmt.Errorf("the bus's users on %s: %w", n.name, err)
		}
		if n.proc != nil {
			if err := n.proc.signal(syscall.SIGHUP); err != nil {
				return fmt.Errorf("the bus's users on %s: %w", n.name, err)
			}
		}
	}
	if n.srv != nil {
		if err := n.srv.ReloadOptions(opts); err != nil {
			return fmt.Errorf("the bus's users on %s: %w", n.name, err)
		}
	}
	n.opts = opts
	return nil
}

// admit replaces the users every node admits.
func (b *bus) admit(users []*server.NkeyUser) error {
	var errs []error
	for _, n := range b.nodes {
		errs = append(errs, n.admit(users))
	}
	return errors.Join(errs...)
}

// close shuts every node down.
func (b *bus) close() error {
	var errs []error
	for _, n := range b.nodes {
		errs = append(errs, n.stop())
	}
	return errors.Join(errs...)
}

// shutdown shuts srv down and waits, bounded, until it has.
func shutdown(srv *server.Server) {
	srv.Shutdown()
	done := make(chan struct{})
	go func() { srv.WaitForShutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(busReadyTimeout):
	}
}

// connect is a client connection to the bus, named for what uses it and
// authenticated with the nkey seed in seedFile, the way a tool command's
// --nats-nkey flag would.
func (b *bus) connect(name, seedFile string, extra ...nats.Option) (*nats.Conn, error) {
	return b.connectFirst(0, name, seedFile, extra...)
}

// seedsFrom is the seed list with node i first and the others after it.
func (b *bus) seedsFrom(i int) string {
	urls := make([]string, 0, len(b.nodes))
	for j := range b.nodes {
		urls = append(urls, b.nodes[(i+j)%len(b.nodes)].url)
	}
	return strings.Join(urls, ",")
}

// connectFirst is connect, trying node i (modulo the nodes) first: the
// dev plane spreads its parts over a cluster's nodes this way. Once
// connected, a client learns every node from the cluster and reconnects to
// another when its own stops.
func (b *bus) connectFirst(i int, name, seedFile string, extra ...nats.Option) (*nats.Conn, error) {
	seeds := b.seedsFrom(i % len(b.nodes))
	secured, err := garmtool.BusFlags{URL: seeds, NKey: seedFile}.ConnectOptions()
	if err != nil {
		return nil, fmt.Errorf("connecting %s: %w", name, err)
	}
	opts := append(secured, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.DontRandomize())
	nc, err := nats.Connect(seeds, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connecting %s to %s: %w", name, seeds, err)
	}
	return nc, nil
}

// createStreams creates what garmd writes to, as an operator would (design
// 7.10): the ledger, audit and notify streams, the spent-grant bucket,
// the catalogue versions bucket and the approvals bucket.
// Each is created or brought to this configuration, so a reused --data
// directory starts the same way a fresh one does.
// replicas is how many copies JetStream keeps of each: 1 on a single
// server, 3 on a cluster.
func createStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	var errs []error
	for _, cfg := range garmd.WriteStreams(replicas) {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			errs = append(errs, fmt.Errorf("creating stream %s: %w", cfg.Name, err))
		}
	}
	// The bucket is created once and fenced; a fenced bucket kept in --data
	// from an earlier run cannot be updated back to a plain one, and need
	// not be.
	if _, err := js.KeyValue(ctx, wire.GrantsSpentBucket); errors.Is(err, jetstream.ErrBucketNotFound) {
		if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:   wire.GrantsSpentBucket,
			TTL:      SpentGrantTTL,
			Storage:  jetstream.FileStorage,
			Replicas: replicas,
		}); err != nil {
			errs = append(errs, fmt.Errorf("creating bucket %s: %w", wire.GrantsSpentBucket, err))
		}
	}
	if err := garmd.FenceGrantsBucket(ctx, js); err != nil {
		errs = append(errs, err)
	}
	// The counters garmd --limits counts calls on.
	if err := garmd.CreateLimitStreams(ctx, js, replicas); err != nil {
		errs = append(errs, err)
	}
	// The highest signed catalogue version served, which garmd
	// --catalogue-keys reads and raises.
	if err := garmd.EnsureCatalogueVersionsBucket(ctx, js, replicas); err != nil {
		errs = append(errs, err)
	}
	// The approval requests garmd records and the approvals service decides.
	if _, err := pending.Ensure(ctx, js, replicas); err != nil {
		errs = append(errs, fmt.Errorf("creating bucket %s: %w", pending.Bucket, err))
	}
	return errors.Join(errs...)
}
