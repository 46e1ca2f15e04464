package devplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const (
	// readyTimeout bounds how long Start waits for a component to be ready.
	readyTimeout = 30 * time.Second
	// serviceDrainTimeout is how long the example services let running
	// calls finish at shutdown.
	serviceDrainTimeout = 10 * time.Second
)

// Plane is a running dev plane: the embedded NATS server with its streams,
// the dev identity provider, the in-process tool services and garmd.
type Plane struct {
	urls   URLs
	logger *slog.Logger
	// traces is --traces' export, garmdTraces and toolTraces the providers
	// garmd and the in-process tool services are given; nil without it.
	traces      *traceExport
	garmdTraces *sdktrace.TracerProvider
	toolTraces  *toolTracers
	catalogue   *builder.Catalogue
	idp         *idp.IdP
	// quickStart is the text printed once the plane is ready.
	quickStartMu sync.Mutex
	quickStart   string
	hashKeyFile  string
	// approvalStateKeyFile protects MCP requestState (garmd's
	// --approval-state-key-file).
	approvalStateKeyFile string
	// signer signs every catalogue served; garmd verifies it.
	signer *catalogueSigner

	runDir  string // the catalogue and hash key; removed at Close
	ids     *identities
	bus     *bus
	busConn *nats.Conn // the stack's own, as the bus's operator: streams and the ledger tail
	idpSrv  *idp.Server
	// approvals is the approvals service, garmd's grant issuer.
	approvals     *approvalsRun
	approvalsConn *nats.Conn // the approvals service's, as its own bus identity
	services      []*service
	tail          *ledgerTail
	rows          *rowIndex // every ledger row of this run, by event id, for /ledger
	devSrv        *http.Server
	personas      *idp.Personas
	opts          Options

	reloadMu sync.Mutex // one Reload at a time
	daemonMu sync.Mutex // the daemon fields below, swapped by Reload

	daemons  []*daemonRun // one per garmd replica, swapped by Reload
	front    *front       // before the replicas when there are several
	frontURL string

	closing  atomic.Bool
	stopOnce sync.Once
	stopped  chan struct{} // closed when a component failed or Close began
	stopErr  error
	closed   sync.Once
	closeErr error
}

// service is an example tool service running on the bus.
type service struct {
	name string
	// pkg is the proto package it serves, whose bus identity it connects
	// as, on conn.
	pkg  string
	conn *nats.Conn
	svc  *garmtool.Service
	stop context.CancelFunc
	// done receives what Run returned once it has, nil when it stopped by
	// itself: that was reported through fail.
	done chan error
}

// Start starts every component and returns once all are ready: garmd's
// listeners are bound and it answers ready, and every tool service is
// serving. ctx bounds the start only; the stack runs until Close. On an
// error, whatever had started is stopped again.
func Start(ctx context.Context, o Options) (*Plane, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Logs == nil {
		o.Logs = os.Stderr
	}
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelInfo
	}
	s := &Plane{
		logger:  slog.New(slog.NewTextHandler(o.Logs, &slog.HandlerOptions{Level: level})),
		stopped: make(chan struct{}),
	}
	if err := s.start(ctx, o); err != nil {
		closeCtx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		defer cancel()
		return nil, errors.Join(err, s.Close(closeCtx))
	}
	return s, nil
}

func (s *Plane) start(ctx context.Context, o Options) error {
	s.opts = o
	var err error
	if s.runDir, err = os.MkdirTemp("", "garm-devplane-"); err != nil {
		return err
	}
	if s.catalogue, err = loadCatalogue(ctx, o.Catalogue, s.cataloguePath(), o.ExtraRoots); err != nil {
		return err
	}
	if s.signer, err = newCatalogueSigner(s.runDir); err != nil {
		return err
	}
	if err := s.signer.sign(s.cataloguePath(), s.catalogue.Bytes); err != nil {
		return err
	}
	hashKeyFile, err := writeHashKey(s.runDir)
	if err != nil {
		return err
	}
	if s.approvalStateKeyFile, err = writeKey(s.runDir, "approval-state.key"); err != nil {
		return err
	}
	if s.personas, err = idp.LoadPersonas(o.Personas); err != nil {
		return fmt.Errorf("--personas: %w", err)
	}
	s.warnUndeclaredCompartments()

	s.urls.NATSSeeds = filepath.Join(s.runDir, "bus")
	if s.ids, err = newIdentities(s.catalogue.Artifact, s.urls.NATSSeeds); err != nil {
		return fmt.Errorf("the bus's identities: %w", err)
	}
	if o.Traces != nil {
		if s.traces, err = newTraceExport(ctx, o.Traces); err != nil {
			return fmt.Errorf("--traces: %w", err)
		}
		if s.garmdTraces, err = s.traces.provider(ctx, GarmdServiceName); err != nil {
			return fmt.Errorf("--traces: %w", err)
		}
	}
	if err := s.startBus(ctx, o); err != nil {
		return err
	}
	if s.idp, err = idp.New(s.personas, idp.Options{Logger: s.logger}); err != nil {
		return err
	}
	if s.idpSrv, err = s.idp.Start(o.IdPListen); err != nil {
		return fmt.Errorf("--idp-listen: %w", err)
	}
	s.urls.IdP = s.idpSrv.URL()
	if err := s.startApprovals(ctx); err != nil {
		return err
	}
	if err := s.startServices(ctx, o.Services); err != nil {
		return err
	}
	s.rows = newRowIndex()
	if s.tail, err = startLedgerTail(ctx, s.busConn, o.Ledger, s.rows); err != nil {
		return err
	}
	if err := s.startDevEndpoint(o.DevListen); err != nil {
		return err
	}
	s.hashKeyFile = hashKeyFile
	if err := s.startDaemon(ctx); err != nil {
		return err
	}
	return s.renderQuickStart()
}

// renderQuickStart renders the quick-start of the catalogue now served.
func (s *Plane) renderQuickStart() error {
	render := s.opts.QuickStart
	if render == nil {
		render = GenericQuickStart
	}
	text, err := render(s.Catalogue(), s.personas, s.urls)
	if err != nil {
		return err
	}
	s.quickStartMu.Lock()
	s.quickStart = text
	s.quickStartMu.Unlock()
	return nil
}

// cataloguePath is where the artifact garmd serves is written.
func (s *Plane) cataloguePath() string { return filepath.Join(s.runDir, "catalogue.binpb") }

// writeHashKey writes a fresh random key for hash redactions to a file only
// its owner reads, and answers the file's path. The key is never printed.
func writeHashKey(dir string) (string, error) { return writeKey(dir, "hash.key") }

// writeKey writes 32 fresh random bytes, hex-encoded, to the file name in
// dir, readable only by its owner, and answers its path.
func writeKey(dir, name string) (string, error) {
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand crashes the program rather than return an error
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// startBus starts the embedded NATS server and creates the streams and the
// spent-grant bucket.
func (s *Plane) startBus(ctx context.Context, o Options) error {
	storeDir := o.DataDir
	if storeDir == "" {
		storeDir = filepath.Join(s.runDir, "jetstream")
	}
	if err := os.MkdirAll(storeDir, 0o700); err != nil {
		return fmt.Errorf("--data: %w", err)
	}
	var err error
	if o.Nodes > 1 {
		s.bus, err = startClusterBus(o.NATSListen, storeDir, o.Nodes, s.ids.users, o.NATSServerBinary, s.runDir)
	} else {
		s.bus, err = startBus(o.NATSListen, storeDir, s.ids.users)
	}
	if err != nil {
		return err
	}
	s.urls.NATS = s.bus.url
	for _, n := range s.bus.nodes {
		s.urls.Nodes = append(s.urls.Nodes, n.url)
		if n.bin != "" {
			s.urls.NodePIDs = append(s.urls.NodePIDs, n.pid())
			s.urls.Logs = s.runDir
		}
	}
	if s.busConn, err = s.bus.connect("garm dev", s.ids.seeds[OperatorIdentity]); err != nil {
		return err
	}
	js, err := jetstream.New(s.busConn)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := waitForJetStream(ctx, js); err != nil {
		return err
	}
	return createStreams(ctx, js, s.streamReplicas())
}

// streamReplicas is how many replicas each stream and the bucket has: one
// per node, at most 3.
func (s *Plane) streamReplicas() int { return min(len(s.bus.nodes), 3) }

// startServices runs the in-process tool services on the bus, each
// connected as its package's identity, and waits until every one serves.
func (s *Plane) startServices(ctx context.Context, services func(...garmtool.Option) ([]Service, error)) error {
	if services == nil {
		return nil
	}
	opts := []garmtool.Option{garmtool.WithLogger(s.logger), garmtool.WithDrainTimeout(serviceDrainTimeout)}
	if s.traces != nil {
		// A span no service's package claims is no one's in particular, but
		// never garmd's.
		fallback, err := s.traces.provider(ctx, ToolsServiceName)
		if err != nil {
			return fmt.Errorf("--traces: %w", err)
		}
		s.toolTraces = &toolTracers{fallback: fallback}
		opts = append(opts, garmtool.WithTracerProvider(s.toolTraces))
	}
	svcs, err := services(opts...)
	if err != nil {
		return fmt.Errorf("the in-process services: %w", err)
	}
	for _, svc := range svcs {
		if s.traces != nil {
			tp, err := s.traces.provider(ctx, svc.Name)
			if err != nil {
				return fmt.Errorf("--traces: %w", err)
			}
			s.toolTraces.route(svc.Package, tp)
		}
	}
	for _, svc := range svcs {
		if err := s.run(&service{name: svc.Name, pkg: svc.Package, svc: svc.Service}); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, svc := range s.services {
		select {
		case <-svc.svc.Ready():
		case <-svc.done:
			svc.done <- nil // for Close
			return s.Wait() // why it stopped, as run reported it
		case <-ctx.Done():
			return fmt.Errorf("the %s service was not serving within %s: %w", svc.name, readyTimeout, ctx.Err())
		}
	}
	return nil
}

// run serves svc, connected as its package's identity, until Close; its
// stopping before then fails the stack.
func (s *Plane) run(svc *service) error {
	seed, err := s.ids.seed(natsperm.ToolUser(svc.pkg))
	if err != nil {
		return fmt.Errorf("the %s service: %w", svc.name, err)
	}
	// On a cluster the services are spread over the nodes in turn.
	if svc.conn, err = s.bus.connectFirst(len(s.services), "garm dev "+svc.name, seed); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(context.Background())
	svc.stop, svc.done = stop, make(chan error, 1)
	s.services = append(s.services, svc)
	go func() {
		err := svc.svc.Run(runCtx, svc.conn)
		if !s.closing.Load() {
			s.fail(fmt.Errorf("the %s service stopped: %v", svc.name, err))
			err = nil
		}
		svc.done <- err
	}()
	return nil
}

// waitReady polls url until it answers 200, for at most readyTimeout.
func waitReady(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("garmd was not ready within %s (%s)", readyTimeout, url)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URLs are where the plane's parts answer.
func (s *Plane) URLs() URLs { return s.urls }

// BusSeed is the nkey seed file of one of the bus's identities: garmd
// (natsperm.GarmdUser), a tool package's (natsperm.ToolUser), the
// operator's (OperatorIdentity) or the agent's (AgentIdentity).
func (s *Plane) BusSeed(identity string) (string, error) { return s.ids.seed(identity) }

// IdP is the running dev identity provider.
func (s *Plane) IdP() *idp.IdP { return s.idp }

// Catalogue is the catalogue garmd serves, as last built.
func (s *Plane) Catalogue() *builder.Catalogue {
	s.quickStartMu.Lock()
	defer s.quickStartMu.Unlock()
	return s.catalogue
}

// QuickStart is the text printed once the plane is ready, for the
// catalogue now served.
func (s *Plane) QuickStart() string {
	s.quickStartMu.Lock()
	defer s.quickStartMu.Unlock()
	return s.quickStart
}

// fail records the first component that stopped by itself and wakes Wait.
func (s *Plane) fail(err error) {
	s.stopOnce.Do(func() {
		s.stopErr = err
		close(s.stopped)
	})
}

// Wait blocks until a component stops by itself, answering why, or until
// Close begins, answering nil.
func (s *Plane) Wait() error {
	<-s.stopped
	return s.stopErr
}

// Close stops the stack in order, each step bounded by ctx: garmd (no new
// calls, calls in flight finish, the ledger flushes), the tool services
// (running calls finish), the ledger tail, the approvals service, the identity provider, the NATS
// server; then it removes the temporary directory (never --data). A step
// that does not finish in time is abandoned and reported, and the next one
// runs. Close is safe to call more than once.
func (s *Plane) Close(ctx context.Context) error {
	s.closed.Do(func() {
		s.closing.Store(true)
		s.fail(nil)
		s.closeErr = s.shutdown(ctx)
	})
	return s.closeErr
}

func (s *Plane) shutdown(ctx context.Context) error {
	var errs []error
	if s.front != nil {
		// Calls in flight through the front finish first.
		if err := s.front.srv.Shutdown(ctx); err != nil {
			_ = s.front.srv.Close()
			errs = append(errs, fmt.Errorf("the round-robin front: %w", err))
		}
	}
	if err := s.stopRunningDaemon(ctx); err != nil {
		errs = append(errs, err)
	}
	for _, svc := range s.services {
		svc.stop()
	}
	for _, svc := range s.services {
		if err := await(ctx, "the "+svc.name+" service", svc.done); err != nil {
			errs = append(errs, err)
		}
	}
	for _, svc := range s.services {
		if svc.conn != nil {
			svc.conn.Close()
		}
	}
	if s.traces != nil {
		if err := s.traces.shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("the traces: %w", err))
		}
	}
	if s.tail != nil {
		s.tail.stop()
	}
	if s.devSrv != nil {
		if err := s.devSrv.Shutdown(ctx); err != nil {
			_ = s.devSrv.Close()
			errs = append(errs, fmt.Errorf("the dev endpoint: %w", err))
		}
	}
	if s.approvals != nil {
		if err := s.approvals.srv.Shutdown(ctx); err != nil {
			_ = s.approvals.srv.Close()
			errs = append(errs, fmt.Errorf("the approvals service: %w", err))
		}
	}
	if s.idpSrv != nil {
		if err := s.idpSrv.Shutdown(ctx); err != nil {
			_ = s.idpSrv.Close()
			errs = append(errs, fmt.Errorf("the identity provider: %w", err))
		}
	}
	if s.approvalsConn != nil {
		s.approvalsConn.Close()
	}
	if s.busConn != nil {
		s.busConn.Close()
	}
	if s.bus != nil {
		if err := s.bus.close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.urls.DevSecretFile != "" {
		if err := os.Remove(s.urls.DevSecretFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if s.runDir != "" {
		if err := os.RemoveAll(s.runDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// await waits, bounded by ctx, for a component's run to return.
func await(ctx context.Context, what string, done <-chan error) error {
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s did not stop in time: %w", what, ctx.Err())
	}
}

// warnUndeclaredCompartments logs each compartment the personas name that
// the catalogue does not declare, with the declared name meant.
func (s *Plane) warnUndeclaredCompartments() {
	var declared []string
	for _, d := range s.catalogue.Artifact.Catalogue.GetCompartments() {
		declared = append(declared, d.GetName())
	}
	for _, problem := range s.personas.UndeclaredCompartments(declared) {
		s.logger.Warn("personas: " + problem)
	}
}
