package garmtool

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// ErrDrainTimeout is the cause of a handler's context being cancelled
// because the drain timeout elapsed after shutdown began
// (context.Cause(ctx) returns it).
var ErrDrainTimeout = errors.New("garmtool: drain timeout elapsed")

// flushTimeout bounds the wait for the NATS server to confirm what was sent
// (subscriptions at start, answers at shutdown).
const flushTimeout = 5 * time.Second

// addService is micro.AddService; a test makes it fail part-way through a
// start.
var addService = micro.AddService

// semverPattern is the pattern semver.org suggests, which micro enforces.
var semverPattern = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)

// Run serves every registered tool on nc until ctx is done, then drains:
// NATS stops delivering to this process, handlers still running keep a
// context of their own (ctx's values, not its cancellation) for up to the
// drain timeout before it is cancelled, and Run returns once they have
// exited and every instance has stopped. It returns nil after a drain that
// ctx started, and an error wrapping nats.ErrConnectionClosed when nc closed
// under it.
//
// A Service serves once: Run refuses when called again, and refuses to start
// without a connection, without endpoints or with a version that is not
// semantic versioning. If an instance fails to start, those that started are
// stopped before Run returns the error.
func (s *Service) Run(ctx context.Context, nc *nats.Conn) error {
	s.mu.Lock()
	if s.used {
		s.mu.Unlock()
		return errors.New("garmtool: Run called again; a Service serves once")
	}
	s.used = true
	endpoints := s.endpoints
	s.mu.Unlock()

	switch {
	case nc == nil:
		return errors.New("garmtool: Run needs a NATS connection")
	case len(endpoints) == 0:
		return errors.New("garmtool: no tools to serve; register them (with a generated Serve<Service>) before Run")
	case !semverPattern.MatchString(s.version):
		return fmt.Errorf("garmtool: version %q is not a semantic version such as 1.2.3", s.version)
	}

	srv := newServer(ctx, s.opts.logger, endpoints)
	srv.tracer = tracerOf(s.opts.tracerProvider)
	defer srv.cancel(context.Canceled)
	instances, err := srv.start(nc, s.name, s.version, s.opts.concurrency)
	if err != nil {
		return err
	}
	if err := flush(ctx, nc); err != nil {
		srv.log.Warn("garmtool: the NATS server has not confirmed the subscriptions; they are sent when it is reachable", "error", err)
	}
	first := endpoints[0].ref
	srv.log.Info("garmtool: serving",
		"name", s.name, "version", s.version,
		"concurrency", s.opts.concurrency, "drain_timeout", s.opts.drainTimeout,
		"identity", first.DescriptorHash, "contract_version", first.ContractVersion,
		"services", srv.serviceNames(), "tools", srv.fqns())
	// Ready only once the line saying so is written: whoever waits on
	// Ready may read the log at once.
	close(s.ready)

	connClosed := false
	select {
	case <-ctx.Done():
	case <-srv.connLost:
		connClosed = true
	}
	return srv.shutdown(nc, instances, s.opts.drainTimeout, connClosed)
}

// server is the state of one Run: what handlers share while it serves.
type server struct {
	log       *slog.Logger
	endpoints []*endpoint
	base      context.Context // ctx's values without its cancellation
	tracer    trace.Tracer
	cancel    context.CancelCauseFunc
	gate      gate

	connLost     chan struct{}
	connLostOnce sync.Once
}

func newServer(ctx context.Context, log *slog.Logger, endpoints []*endpoint) *server {
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	return &server{log: log, endpoints: endpoints, base: base, cancel: cancel, connLost: make(chan struct{}), tracer: tracerOf(nil)}
}

// services returns the proto services served, in registration order, with
// their endpoints.
func (srv *server) services() ([]string, map[string][]*endpoint) {
	var order []string
	byService := map[string][]*endpoint{}
	for _, ep := range srv.endpoints {
		if _, ok := byService[ep.ref.Service]; !ok {
			order = append(order, ep.ref.Service)
		}
		byService[ep.ref.Service] = append(byService[ep.ref.Service], ep)
	}
	return order, byService
}

func (srv *server) serviceNames() []string {
	order, _ := srv.services()
	names := make([]string, len(order))
	for i, service := range order {
		names[i] = wire.ServiceName(service)
	}
	return names
}

func (srv *server) fqns() []string {
	fqns := make([]string, len(srv.endpoints))
	for i, ep := range srv.endpoints {
		fqns[i] = ep.ref.FQN
	}
	return fqns
}

// start registers n instances; an instance is one micro service per proto
// service, named after it and carrying its tools. On any failure it stops
// what it started.
func (srv *server) start(nc *nats.Conn, name, version string, n int) ([]micro.Service, error) {
	order, byService := srv.services()
	first := srv.endpoints[0].ref
	metadata := map[string]string{
		wire.IdentityMetadata:        first.DescriptorHash,
		wire.ContractVersionMetadata: first.ContractVersion,
	}
	var started []micro.Service
	fail := func(err error) ([]micro.Service, error) {
		return nil, errors.Join(err, stopAll(started))
	}
	for i := range n {
		for _, service := range order {
			ms, err := addService(nc, micro.Config{
				Name:        wire.ServiceName(service),
				Version:     version,
				Description: name,
				Metadata:    metadata,
				DoneHandler: srv.serviceDone,
				ErrorHandler: func(_ micro.Service, err *micro.NATSError) {
					// A slow consumer drops requests; their callers time out.
					srv.log.Warn("garmtool: NATS reported an error on a subscription", "subject", err.Subject, "error", err.Description)
				},
			})
			if err != nil {
				return fail(fmt.Errorf("garmtool: starting instance %d of %s: %w", i+1, service, err))
			}
			started = append(started, ms)
			for _, ep := range byService[service] {
				err := ms.AddEndpoint(wire.EndpointName(ep.subject),
					micro.HandlerFunc(func(req micro.Request) { srv.serve(ep, req) }),
					micro.WithEndpointSubject(ep.subject),
					micro.WithEndpointQueueGroup(ep.queueGroup))
				if err != nil {
					return fail(fmt.Errorf("garmtool: starting instance %d of %s: endpoint %s: %w", i+1, service, ep.subject, err))
				}
			}
		}
	}
	return started, nil
}

// serviceDone is called when a micro service stops. Outside a drain that
// means its connection closed.
func (srv *server) serviceDone(micro.Service) {
	if !srv.gate.isDraining() {
		srv.connLostOnce.Do(func() { close(srv.connLost) })
	}
}

func (srv *server) shutdown(nc *nats.Conn, instances []micro.Service, drainTimeout time.Duration, connClosed bool) error {
	running, idle := srv.gate.drain()
	srv.log.Info("garmtool: draining", "running", running, "drain_timeout", drainTimeout, "connection_closed", connClosed)
	errs := []error{stopAll(instances)}
	timer := time.AfterFunc(drainTimeout, func() {
		srv.log.Warn("garmtool: drain timeout elapsed; cancelling the handlers still running", "running", srv.gate.count())
		srv.cancel(ErrDrainTimeout)
	})
	<-idle
	timer.Stop()
	if err := flush(context.Background(), nc); err != nil && !connClosed {
		srv.log.Warn("garmtool: the NATS server has not confirmed the last answers", "error", err)
	}
	if connClosed {
		errs = append(errs, fmt.Errorf("garmtool: stopped serving: %w", nats.ErrConnectionClosed))
	}
	srv.log.Info("garmtool: stopped")
	return errors.Join(errs...)
}

// flush waits, for at most flushTimeout and while ctx lasts, until the
// server has processed what was sent on nc. It does not wait for a
// connection that is down: the client sends its subscriptions again, and
// what it buffered, when it reconnects.
func flush(ctx context.Context, nc *nats.Conn) error {
	if !nc.IsConnected() {
		return fmt.Errorf("not connected (%s)", nc.Status())
	}
	ctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	return nc.FlushWithContext(ctx)
}

func stopAll(instances []micro.Service) error {
	var errs []error
	for _, ms := range instances {
		if err := ms.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("garmtool: stopping %s: %w", ms.Info().Name, err))
		}
	}
	return errors.Join(errs...)
}

// gate admits requests to handlers until a drain begins, and tells the
// drain when the last admitted one has left.
type gate struct {
	mu       sync.Mutex
	draining bool
	running  int
	idle     chan struct{}
}

// enter admits a request, or reports false once a drain began.
func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.draining {
		return false
	}
	g.running++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	if g.draining && g.running == 0 {
		close(g.idle)
	}
}

// drain stops admitting and returns how many are running and a channel
// closed once none is.
func (g *gate) drain() (int, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.draining {
		g.draining = true
		g.idle = make(chan struct{})
		if g.running == 0 {
			close(g.idle)
		}
	}
	return g.running, g.idle
}

func (g *gate) isDraining() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.draining
}

func (g *gate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running
}
