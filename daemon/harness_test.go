package garmd_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// waitTimeout bounds every wait of these tests.
const waitTimeout = 15 * time.Second

// bus is the plane's NATS server, with JetStream. The fault tests stop it,
// make calls while it is gone and start it again: it comes back on the same
// port, so clients reconnect, and the same store, so the streams are there.
type bus struct {
	srv *garmtooltest.Server
	url string
	// nodes, on a cluster, are the nodes' own URLs: the tool services are
	// spread over them and the first garmd connects to the first.
	nodes []string
}

// serviceURL is where the i-th tool service connects: on a cluster, the
// nodes in turn; on one server, that server.
func (b *bus) serviceURL(i int) string {
	if len(b.nodes) == 0 {
		return b.url
	}
	return b.nodes[i%len(b.nodes)]
}

// daemonURL is what the stack's garmd connects to: on a cluster, the
// first node alone (the cluster tells it the others).
func (b *bus) daemonURL() string { return b.serviceURL(0) }

func startBus(t testing.TB) *bus {
	t.Helper()
	srv := garmtooltest.StartJetStream(t)
	b := &bus{srv: srv, url: srv.URL()}
	createStreams(t, b.url)
	return b
}

func (b *bus) stop() { b.srv.Stop() }

func (b *bus) start(t testing.TB) {
	t.Helper()
	if err := b.srv.Start(); err != nil {
		t.Fatal(err)
	}
}

// waitServing waits until a tool service answers on subject again, after
// the bus came back: garmd and each service reconnect on their own, and
// garmd may be ready before the service has subscribed again. The request
// carries no invocation, which the runtime refuses before any handler runs.
func (b *bus) waitServing(t testing.TB, subject string) {
	t.Helper()
	nc, err := nats.Connect(b.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	eventually(t, subject+" served again", func() bool {
		_, err := nc.Request(subject, nil, time.Second)
		return err == nil
	})
}

func createStreams(t testing.TB, url string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "GARM_LEDGER", Subjects: []string{"garm.v1.ledger.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	createGovernanceStreams(t, js)
	if err := garmd.EnsureCatalogueVersionsBucket(ctx, js, 1); err != nil {
		t.Fatal(err)
	}
}

// logBuffer collects garmd's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// stack is a whole plane on loopback: bus, identity provider, tool
// services and garmd.
type stack struct {
	t        testing.TB
	bus      *bus
	idp      *idp.IdP
	idpSrv   *idp.Server
	cfg      garmd.Config
	daemon   *garmd.Daemon
	url      string
	adminURL string
	logs     *logBuffer
	stop     context.CancelFunc
	done     chan error
	client   *http.Client
	// crashRecords kills the records service as a crash would.
	crashRecords func()
	// payments counts the calls the payments service served, on a governed
	// stack.
	payments *paymentsService

	ledgerMu sync.Mutex
	rows     map[string]*ledgerv1.Event
	order    []string
	consumer jetstream.Consumer
}

type stackOption func(*garmd.Config)

func withLogLedger() stackOption {
	return func(c *garmd.Config) { c.LedgerStream = false }
}

func withToolTimeout(d time.Duration) stackOption {
	return func(c *garmd.Config) { c.ToolTimeout = d }
}

// fixtureCatalogue builds the records fixture and the calculator into one
// catalogue, once per test binary.
var fixtureCatalogue = sync.OnceValues(func() ([]byte, error) {
	c, err := builder.FromRoots(context.Background(), "testdata/records/proto", "../examples/calculator/proto")
	if err != nil {
		return nil, err
	}
	return c.Bytes, nil
})

func startStack(t testing.TB, opts ...stackOption) *stack {
	t.Helper()
	return newStack(t, false, opts...)
}

// newStack starts a stack serving the fixture catalogue; a governed one
// also serves the approvals fixture, with grants, the audit sink and
// notify on.
func newStack(t testing.TB, governed bool, opts ...stackOption) *stack {
	t.Helper()
	return newStackOn(t, startBus(t), governed, opts...)
}

// newStackOn is newStack on a bus the caller started: a single server or
// a cluster.
func newStackOn(t testing.TB, b *bus, governed bool, opts ...stackOption) *stack {
	t.Helper()
	s := &stack{t: t, bus: b, logs: &logBuffer{}, rows: map[string]*ledgerv1.Event{}, client: &http.Client{Timeout: waitTimeout}}
	personas, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.idp, err = idp.New(personas, idp.Options{}); err != nil {
		t.Fatal(err)
	}
	if s.idpSrv, err = s.idp.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.idpSrv.Close() })

	// The tool services trace to the provider garmd is given, if any.
	probe := garmd.Config{Issuers: []string{""}}
	for _, o := range opts {
		o(&probe)
	}
	var toolOpts []garmtool.Option
	if probe.TracerProvider != nil {
		toolOpts = append(toolOpts, garmtool.WithTracerProvider(probe.TracerProvider))
	}
	s.crashRecords = startRecordsService(t, s.bus.serviceURL(0), toolOpts...)
	startProfilesService(t, s.bus.serviceURL(1), toolOpts...)
	startCalculator(t, s.bus.serviceURL(2), toolOpts...)

	catalogue := fixtureCatalogue
	if governed {
		catalogue = governedCatalogue
		s.payments = startPaymentsService(t, s.bus.serviceURL(1), toolOpts...)
		opts = append([]stackOption{withGovernance()}, opts...)
	}
	data, err := catalogue()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cataloguePath := filepath.Join(dir, "catalogue.binpb")
	writeFile(t, cataloguePath, data)
	keyPath := filepath.Join(dir, "hash.key")
	writeFile(t, keyPath, []byte("a test hash key of more than sixteen bytes\n"))

	s.cfg = garmd.DefaultConfig()
	s.cfg.Catalogue = cataloguePath
	s.cfg.NATS = s.bus.daemonURL()
	s.cfg.Listen = "127.0.0.1:0"
	s.cfg.AdminListen = "127.0.0.1:0"
	s.cfg.Issuers = []string{s.idp.Issuer()}
	s.cfg.JWKS = []string{s.idpSrv.JWKSURL()}
	s.cfg.HashKeyFile = keyPath
	s.cfg.LedgerStream = true
	s.cfg.ToolTimeout = 5 * time.Second
	s.cfg.Logger = slog.New(slog.NewJSONHandler(s.logs, nil))
	for _, o := range opts {
		o(&s.cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	if s.daemon, err = garmd.New(ctx, s.cfg); err != nil {
		cancel()
		t.Fatal(err)
	}
	s.url = "http://" + s.daemon.Addr().String()
	s.adminURL = "http://" + s.daemon.AdminAddr().String()
	s.done = make(chan error, 1)
	go func() { s.done <- s.daemon.Run(ctx) }()
	t.Cleanup(s.shutdown)
	return s
}

// shutdown stops garmd and waits for Run to return.
func (s *stack) shutdown() {
	s.t.Helper()
	if s.stop == nil {
		return
	}
	s.stop()
	s.stop = nil
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("garmd stopped with %v", err)
		}
	case <-time.After(waitTimeout + s.cfg.ToolTimeout):
		s.t.Error("garmd did not stop")
	}
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// token is a persona's token; "agent>user" is the agent acting for the user.
func (s *stack) token(persona string) string {
	s.t.Helper()
	user, as := persona, ""
	if i := strings.IndexByte(persona, '>'); i >= 0 {
		as, user = persona[:i], persona[i+1:]
	}
	tok, err := s.idp.Token(user, as)
	if err != nil {
		s.t.Fatal(err)
	}
	return tok
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
	// received is when the answer's body had been read.
	received time.Time
}

func (a *answer) eventID() string { return a.header.Get("Garm-Event-Id") }

// post calls garmd with a bearer token (none when token is "") and a JSON
// body; header adds or overrides headers.
func (s *stack) post(path, token, body string, header ...string) *answer {
	s.t.Helper()
	ans, err := s.postTo(s.url, path, token, body, header...)
	if err != nil {
		s.t.Fatal(err)
	}
	return ans
}

// postTo is post to the garmd at base, returning the transport's error
// rather than failing the test: safe off the test's goroutine.
func (s *stack) postTo(base, path, token, body string, header ...string) (*answer, error) {
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: data, received: time.Now()}, nil
}

func (s *stack) do(req *http.Request) *answer {
	s.t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// row waits for the ledger row with id to land on GARM_LEDGER.
func (s *stack) row(id string) *ledgerv1.Event {
	s.t.Helper()
	if id == "" {
		s.t.Fatal("the answer carries no Garm-Event-Id")
	}
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		s.readLedger()
		s.ledgerMu.Lock()
		e := s.rows[id]
		s.ledgerMu.Unlock()
		if e != nil {
			return e
		}
	}
	s.t.Fatalf("no ledger row %s within %s", id, waitTimeout)
	return nil
}

// ledgerRows is every row read from GARM_LEDGER so far, in arrival order.
func (s *stack) ledgerRows() []*ledgerv1.Event {
	s.readLedger()
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	out := make([]*ledgerv1.Event, len(s.order))
	for i, id := range s.order {
		out[i] = s.rows[id]
	}
	return out
}

// allLedgerRows is every row on GARM_LEDGER: it reads until the stream has
// nothing more to deliver (a row recorded twice fails the test).
func (s *stack) allLedgerRows() []*ledgerv1.Event {
	for {
		before := len(s.ledgerRows())
		if len(s.ledgerRows()) == before {
			return s.ledgerRows()
		}
	}
}

func (s *stack) readLedger() {
	s.t.Helper()
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if s.consumer == nil {
		nc, err := nats.Connect(s.bus.url)
		if err != nil {
			s.t.Fatal(err)
		}
		s.t.Cleanup(nc.Close)
		js, err := jetstream.New(nc)
		if err != nil {
			s.t.Fatal(err)
		}
		// Just after a cluster's election the JetStream API may not answer
		// yet ("no responders"): asked again, bounded by ctx.
		for {
			if s.consumer, err = js.OrderedConsumer(ctx, "GARM_LEDGER", jetstream.OrderedConsumerConfig{}); err == nil {
				break
			}
			if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoStreamResponse) || ctx.Err() != nil {
				s.t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for s.fetchLedger() && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
}

// fetchLedger reads one batch of GARM_LEDGER into rows; it says whether to
// ask again because the JetStream API did not answer ("no responders",
// just after a cluster's election) and nothing was read.
func (s *stack) fetchLedger() (again bool) {
	s.t.Helper()
	batch, err := s.consumer.Fetch(64, jetstream.FetchMaxWait(250*time.Millisecond))
	if errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	if err != nil {
		s.t.Fatal(err)
	}
	read := 0
	for msg := range batch.Messages() {
		read++
		var b ledgerv1.Batch
		if err := proto.Unmarshal(msg.Data(), &b); err != nil {
			s.t.Fatalf("a ledger message is not a Batch: %v", err)
		}
		for _, e := range b.GetEvents() {
			if s.rows[e.GetEventId()] != nil {
				s.t.Fatalf("ledger row %s recorded twice", e.GetEventId())
			}
			s.rows[e.GetEventId()] = e
			s.order = append(s.order, e.GetEventId())
		}
	}
	err = batch.Error()
	if read == 0 && errors.Is(err, nats.ErrNoResponders) {
		return true
	}
	if err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		s.t.Fatal(err)
	}
	return false
}
