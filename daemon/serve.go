package garmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/admin"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"github.com/garm-dev/garm/daemon/internal/checkcache"
	"github.com/garm-dev/garm/daemon/internal/gctarget"
	"github.com/garm-dev/garm/daemon/internal/ledger"
	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	"github.com/garm-dev/garm/daemon/internal/ledger/logsink"
	"github.com/garm-dev/garm/daemon/internal/listing"
	"github.com/garm-dev/garm/daemon/internal/mcp"
	"github.com/garm-dev/garm/daemon/internal/metrics"
	"github.com/garm-dev/garm/daemon/internal/quarantine"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
	"github.com/garm-dev/garm/daemon/internal/tracing"
	"github.com/garm-dev/garm/daemon/internal/transport/natsbus"
	"github.com/garm-dev/garm/internal/loopback"
	"github.com/nats-io/nats.go"
)

// Timeouts of the daemon's own housekeeping.
const (
	// connectTimeout bounds the first connection to the bus.
	connectTimeout = 10 * time.Second
	// drainGrace is added to the tool timeout when waiting for in-flight
	// calls at shutdown: every call is bounded by its deadline, so they all
	// end within the tool timeout; the grace covers writing the answers.
	// It is also the time a whole request has to write its answer.
	drainGrace = 5 * time.Second
	// flushTimeout bounds the ledger's flush at shutdown.
	flushTimeout = 10 * time.Second
)

// Cache sizes, in entries.
const (
	tokenCacheSize  = 10_000
	resolutionCache = 4_096
)

// Daemon is a garmd that has loaded its catalogue, connected to the bus and
// bound its listeners, ready to Run.
type Daemon struct {
	cfg Config
	// gc is the garbage collector's target applied at start, when Config
	// asked for one.
	gc      *gctarget.Decision
	logger  *slog.Logger
	serving *catalogue.Serving
	nc      *nats.Conn
	// busClosed is closed when the bus connection is closed for good.
	busClosed chan struct{}
	recorder  ledger.Recorder
	opt       optionalSteps
	metrics   *metrics.Metrics
	// ops are the counters of what garmd depends on, incremented from
	// before metrics exists.
	ops       metrics.Operations
	plane     net.Listener
	adminL    net.Listener
	planeSrv  *http.Server
	toolPlane *toolplane.Plane
	adminH    http.Handler
	stopping  atomic.Bool
	// gate checks the catalogue's signatures and versions; nil without
	// --catalogue-keys.
	gate *signed.Gate
	// reload keeps an s3:// catalogue current; nil for a file, or when
	// --catalogue-poll is 0. hints is its subscription to announcements.
	reload *reloader
	hints  *nats.Subscription
	// onSwap are called with every generation a reload swaps in, after the
	// swap, from the reloader's goroutine. Register them in New, before Run.
	onSwap []func(*catalogue.Generation)
	// checkCache is --check-cache, opened; nil without it or when it
	// could not be opened.
	checkCache *checkcache.Cache
	// quarantine keeps packages whose services mismatch the catalogue
	// from being called.
	quarantine *quarantine.Reconciler
	// mcpResource is the MCP endpoint's canonical URL; empty without --mcp.
	mcpResource string
	// tracer records calls' spans; nil is tracing off. traces is its
	// provider, flushed after the ledger.
	tracer *tracing.Tracer
	traces traceProvider
	// quorum is what /readyz knows of JetStream's quorum.
	quorum quorumWatch
}

// Serve runs garmd with cfg until ctx is done, then shuts down (design 7.11).
func Serve(ctx context.Context, cfg Config) error {
	d, err := New(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}

// New validates cfg, loads and mounts the catalogue, connects to the bus,
// checks the streams it will write, binds both listeners and logs the
// startup report. Nothing is served until Run.
func New(ctx context.Context, cfg Config) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	d := &Daemon{cfg: cfg, logger: logger, serving: new(catalogue.Serving)}
	if err := d.openTracing(ctx); err != nil {
		return nil, err
	}
	if err := d.open(ctx); err != nil {
		d.closeAll()
		return nil, err
	}
	return d, nil
}

// open does New's work; on an error, New releases what it opened.
func (d *Daemon) open(ctx context.Context) error {
	cfg, logger := d.cfg, d.logger

	// Before the catalogue is loaded: the load is garmd's largest
	// allocation.
	if cfg.GOGC != "" {
		d.gc = applyGC(cfg.GOGC)
	}
	hashKey, err := ReadHashKey(cfg.HashKeyFile)
	if err != nil {
		return fmt.Errorf("--hash-key-file: %w", err)
	}
	before := heapInUse()
	var (
		gen  *catalogue.Generation
		etag string
		pair *signature.Pair
	)
	load := catalogue.Options{MaxTools: cfg.MaxTools}
	d.openCheckCache(&load)
	if cfg.Signing() {
		d.gate = newGate(cfg)
		gen, pair, etag, err = readSignedCatalogue(ctx, cfg.Catalogue, load, d.gate)
	} else {
		gen, etag, err = readCatalogue(ctx, cfg.Catalogue, load)
	}
	if err != nil {
		return fmt.Errorf("catalogue %s: %w", cfg.Catalogue, err)
	}
	heap := heapInUse()
	heap -= min(before, heap)

	d.busClosed = make(chan struct{})
	if d.nc, err = connect(cfg, d.busClosed, logger); err != nil {
		return err
	}
	if err := d.openLedger(ctx); err != nil {
		return err
	}
	if err := d.openOptional(ctx); err != nil {
		return err
	}
	if err := d.checkReplication(ctx); err != nil {
		return err
	}
	if d.gate != nil {
		if err := d.openVersions(ctx); err != nil {
			return err
		}
		if err := d.judgeFirst(ctx, pair); err != nil {
			return fmt.Errorf("catalogue %s: %w", cfg.Catalogue, err)
		}
	}
	if err := catalogue.Mount(gen, d.opt.steps); err != nil {
		return fmt.Errorf("catalogue %s (%s) does not mount: %w", cfg.Catalogue, gen.Digest, err)
	}
	if d.gate != nil {
		if err := d.commitFirst(ctx, pair); err != nil {
			return fmt.Errorf("catalogue %s: %w", cfg.Catalogue, err)
		}
	}
	d.serving.Store(gen)
	d.recordChecked(gen)

	// The tool plane is bound first: the MCP resource's default URL is
	// its address, and a token may name that resource as its audience.
	if d.plane, err = net.Listen("tcp", cfg.Listen); err != nil {
		return fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	var audiences []string
	if cfg.MCP {
		d.mcpResource = cfg.MCPResource
		if d.mcpResource == "" {
			d.mcpResource = "http://" + d.plane.Addr().String() + mcp.Path
		}
		audiences = []string{d.mcpResource}
	}

	issuers := make([]authn.Issuer, len(cfg.Issuers))
	for i, iss := range cfg.Issuers {
		issuers[i] = authn.Issuer{Name: iss, JWKSURL: cfg.JWKS[i]}
	}
	authenticator, err := authn.New(authn.Config{
		Issuers:   issuers,
		Audience:  cfg.Audience,
		Audiences: audiences,
		CacheSize: tokenCacheSize,
		Logger:    logger,
	})
	if err != nil {
		return err
	}
	sources := metrics.Sources{Ledger: d.recorder.Counts(), TokenCache: authenticator.CacheCounts, InFlight: d.inFlight}
	d.operationSources(&sources, authenticator)
	if n := d.opt.notifier; n != nil {
		sources.Notifications = func() (published, failed, dropped uint64) {
			c := n.Counts()
			return c.Published, c.Failed, c.Dropped
		}
	}
	d.metrics = metrics.New(Version(), sources)
	d.metrics.SetCatalogue(gen.Digest, gen.Producer)
	if err := d.openReloader(ctx, etag); err != nil {
		return fmt.Errorf("catalogue %s: %w", cfg.Catalogue, err)
	}
	d.openQuarantine(ctx, gen)

	cc := chain.Config{
		Serving:      d.serving,
		Authn:        authenticator,
		Input:        input.NewChecker(resolutionCache),
		Redact:       redact.New(resolutionCache, hashKey),
		Lister:       listing.New(listing.Options{}),
		Dispatch:     dispatch.New(natsbus.New(d.nc)),
		Recorder:     d.recorder,
		Grants:       d.opt.grants,
		Limits:       d.opt.limiter,
		Approvals:    d.opt.desk,
		Audit:        d.opt.audit,
		Quarantine:   d.quarantine,
		ToolTimeout:  cfg.ToolTimeout,
		Version:      Version(),
		Observe:      d.metrics.ObserveCallContext,
		LimitRefused: d.metrics.LimitRefused,
		Tracer:       d.tracer,
		Logger:       d.logger,
	}
	if d.opt.notifier != nil {
		cc.Notify = d.opt.notifier
	}
	ch := chain.New(cc)
	d.toolPlane = toolplane.New(ch, toolplane.Limits{BodyTimeout: cfg.BodyTimeout, MaxInFlight: cfg.MaxInFlight})
	var handler http.Handler = d.toolPlane
	if cfg.MCP {
		var stateKey []byte
		if cfg.Approvals {
			if stateKey, err = ReadApprovalStateKey(cfg.ApprovalStateKeyFile); err != nil {
				return fmt.Errorf("--approval-state-key-file: %w", err)
			}
		}
		if handler, err = withMCP(ch, d.toolPlane, d.mcpResource, cfg.Issuers, hashKey, stateKey, logger); err != nil {
			return err
		}
	}
	ac := admin.Config{Ready: d.ready, Degraded: d.degraded, Metrics: d.metrics.Handler(), Logger: logger}
	if d.gate != nil {
		ac.Detail = d.readyDetail
	}
	adminH := admin.Handler(ac)
	guard := cfg.Guard
	if guard == nil && cfg.LoopbackHostsOnly {
		guard = loopback.Guard
	}
	if guard != nil {
		handler, adminH = guard(handler), guard(adminH)
	}
	d.planeSrv = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		// A whole request: its body, its call (bounded by its deadline) and
		// its answer. A caller that will not read the answer loses its
		// connection here, not a goroutine forever.
		WriteTimeout:   cfg.BodyTimeout + cfg.ToolTimeout + drainGrace,
		IdleTimeout:    cfg.IdleTimeout,
		MaxHeaderBytes: cfg.MaxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	d.adminH = adminH

	if d.adminL, err = admin.Listen(cfg.AdminListen); err != nil {
		return fmt.Errorf("--admin-listen %s: %w", cfg.AdminListen, err)
	}
	if err := d.secureListeners(d.planeSrv); err != nil {
		return err
	}
	newReport(ctx, d, gen, heap).log(logger)
	return nil
}

// withMCP serves the MCP endpoint and its metadata beside the tool plane's
// routes (no route can be either path). Its cursors are signed with a key
// derived from the hash key, which every replica shares.
func withMCP(ch *chain.Chain, plane *toolplane.Plane, resource string, issuers []string, hashKey, stateKey []byte, logger *slog.Logger) (http.Handler, error) {
	m, err := mcp.New(mcp.Config{
		Chain:                ch,
		Resource:             resource,
		AuthorizationServers: issuers,
		CursorKey:            hashKey,
		ApprovalStateKey:     stateKey,
		Version:              Version(),
		Logger:               logger,
	})
	if err != nil {
		return nil, fmt.Errorf("--mcp: %w", err)
	}
	guarded := plane.Guard(chain.SurfaceMCP, m)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.Owns(r) {
			guarded.ServeHTTP(w, r)
			return
		}
		plane.ServeHTTP(w, r)
	}), nil
}

func (d *Daemon) openLedger(ctx context.Context) error {
	if !d.cfg.LedgerStream {
		d.recorder = logsink.New(d.logger)
		return nil
	}
	js, err := d.jetStream()
	if err != nil {
		return fmt.Errorf("--ledger-stream: %w", err)
	}
	checkCtx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	if err := ledgerjs.CheckStream(checkCtx, js); err != nil {
		return fmt.Errorf("--ledger-stream: %w", err)
	}
	r, err := ledgerjs.New(js, ledgerjs.Options{Logger: d.logger})
	if err != nil {
		return fmt.Errorf("--ledger-stream: %w", err)
	}
	d.recorder = r
	return nil
}

// inFlight is how many calls the tool plane is reading or running.
func (d *Daemon) inFlight() int {
	if d.toolPlane == nil {
		return 0
	}
	return d.toolPlane.InFlight()
}

// Addr is the tool plane's bound address.
func (d *Daemon) Addr() net.Addr { return d.plane.Addr() }

// MCPResource is the MCP endpoint's canonical URL; empty without --mcp.
func (d *Daemon) MCPResource() string { return d.mcpResource }

// AdminAddr is the admin listener's bound address.
func (d *Daemon) AdminAddr() net.Addr { return d.adminL.Addr() }

// ready is /readyz: a generation is serving, the bus is connected, and
// garmd is not shutting down.
func (d *Daemon) ready() error {
	switch {
	case d.stopping.Load():
		return errors.New("shutting down")
	case d.serving.Load() == nil:
		return errors.New("no catalogue generation is serving")
	case !d.nc.IsConnected():
		return errors.New("not connected to the bus")
	}
	return nil
}

// Run serves until ctx is done, then shuts down in design 7.11's order: the
// reloader stops (no generation is swapped in during the drain), the
// tool plane stops accepting, calls in flight finish (each bounded by its
// deadline), the ledger flushes, the bus closes, the admin listener goes
// last so readiness says "shutting down" throughout.
func (d *Daemon) Run(ctx context.Context) error {
	adminCtx, stopAdmin := context.WithCancel(context.WithoutCancel(ctx))
	adminDone := make(chan error, 1)
	go func() { adminDone <- admin.Serve(adminCtx, d.adminL, d.adminH) }()
	planeDone := make(chan error, 1)
	go func() { planeDone <- d.planeSrv.Serve(d.plane) }()
	stopReloader := d.runReloader(ctx)
	stopQuarantine := d.runQuarantine(ctx)
	stopQuorum := d.runQuorumWatch(ctx)

	var err error
	select {
	case <-ctx.Done():
	case err = <-planeDone:
		err = fmt.Errorf("the tool plane stopped: %w", err)
	}
	d.stopping.Store(true)
	stopReloader()
	stopQuarantine()
	stopQuorum()
	d.logger.Info("garmd: shutting down: no new calls; waiting for calls in flight")

	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.ToolTimeout+drainGrace)
	// Callers still sending a body are cut, not waited for: their calls
	// have not started, and one that never finishes would hold the drain.
	d.toolPlane.StopReading()
	if shutdownErr := d.planeSrv.Shutdown(drainCtx); shutdownErr != nil {
		d.logger.Error("garmd: calls were still in flight when the drain ended", "err", shutdownErr)
	}
	cancel()
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	if closeErr := d.recorder.Close(flushCtx); closeErr != nil {
		d.logger.Error("garmd: the ledger did not flush whole", "err", closeErr)
	}
	if d.opt.notifier != nil {
		if closeErr := d.opt.notifier.Close(flushCtx); closeErr != nil {
			d.logger.Error("garmd: notifications were still queued when the flush ended", "err", closeErr)
		}
	}
	d.flushTraces(flushCtx)
	cancel()
	d.closeBus()
	stopAdmin()
	<-adminDone
	d.logger.Info("garmd: stopped")
	return err
}

// closeAll releases what New opened when it fails part way.
func (d *Daemon) closeAll() {
	if d.plane != nil {
		d.plane.Close()
	}
	if d.adminL != nil {
		d.adminL.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if d.recorder != nil {
		_ = d.recorder.Close(ctx)
	}
	if d.opt.notifier != nil {
		_ = d.opt.notifier.Close(ctx)
	}
	if d.nc != nil {
		d.nc.Close()
	}
	d.flushTraces(ctx)
}

// closeBus drains the bus connection and waits, bounded, until it is closed.
func (d *Daemon) closeBus() {
	if err := d.nc.Drain(); err != nil {
		d.nc.Close()
	}
	select {
	case <-d.busClosed:
	case <-time.After(flushTimeout):
		d.nc.Close()
	}
}
