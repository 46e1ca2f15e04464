package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/approvalstest"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/devkit/devplane"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

// waitTimeout bounds every wait of these tests.
const waitTimeout = 30 * time.Second

// testOptions are the options main uses, every listener on a free loopback
// port.
func testOptions(t testing.TB) Options {
	t.Helper()
	o := DefaultOptions()
	o.NATSListen, o.IdPListen, o.Listen, o.AdminListen, o.DevListen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	o.ApprovalsListen = "127.0.0.1:0"
	logs := &syncBuffer{}
	o.Logs = logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the stack's log:\n%s", logs.String())
		}
	})
	return o
}

// startStack starts a stack with o, as main does, and closes it when the
// test ends.
func startStack(t testing.TB, o Options) *Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("closing the stack: %v", err)
		}
	})
	return s
}

// syncBuffer is a buffer several goroutines write.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// client talks to a stack over HTTP, as a caller with curl would.
type client struct {
	t    testing.TB
	urls URLs
	http *http.Client
}

func newClient(t testing.TB, s *Stack) *client {
	return &client{t: t, urls: s.URLs(), http: &http.Client{Timeout: waitTimeout}}
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   string
}

func (c *client) do(req *http.Request) answer {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// token is GET /token?user=…[&as=…] from the dev IdP, over HTTP.
func (c *client) token(user, as string) string {
	c.t.Helper()
	url := c.urls.IdP + "/token?user=" + user
	if as != "" {
		url += "&as=" + as
	}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	a := c.do(req)
	if a.status != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", url, a.status, a.body)
	}
	return a.body
}

// call posts a JSON body to garmd at route with the bearer token and extra
// header pairs.
func (c *client) call(route, token, body string, header ...string) answer {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.urls.Garmd+route, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.do(req)
}

// ledgerReader reads every row on GARM_LEDGER, in order.
type ledgerReader struct {
	t        testing.TB
	consumer jetstream.Consumer
	rows     []*ledgerv1.Event
}

func readLedger(t testing.TB, s *Stack) *ledgerReader {
	t.Helper()
	nc := connectAs(t, s, OperatorIdentity)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	consumer, err := js.OrderedConsumer(ctx, wire.LedgerStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return &ledgerReader{t: t, consumer: consumer}
}

// fetch reads what has landed since the last fetch, waiting at most wait.
func (l *ledgerReader) fetch(wait time.Duration) {
	l.t.Helper()
	batch, err := l.consumer.Fetch(64, jetstream.FetchMaxWait(wait))
	if err != nil {
		l.t.Fatal(err)
	}
	for msg := range batch.Messages() {
		var b ledgerv1.Batch
		if err := proto.Unmarshal(msg.Data(), &b); err != nil {
			l.t.Fatalf("a ledger message is not a Batch: %v", err)
		}
		l.rows = append(l.rows, b.GetEvents()...)
	}
	if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		l.t.Fatal(err)
	}
}

// exactly waits until n rows have landed, then longer than garmd's batching
// interval to be sure no more follow, and answers them.
func (l *ledgerReader) exactly(n int) []*ledgerv1.Event {
	l.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for len(l.rows) < n && time.Now().Before(deadline) {
		l.fetch(250 * time.Millisecond)
	}
	l.fetch(time.Second)
	if len(l.rows) != n {
		var tools []string
		for _, e := range l.rows {
			tools = append(tools, e.GetTool()+" "+e.GetOutcome())
		}
		l.t.Fatalf("GARM_LEDGER holds %d rows, want one per call made, %d:\n%s", len(l.rows), n, strings.Join(tools, "\n"))
	}
	return l.rows
}

// connectAs is a connection to the stack's bus as one of its identities.
func connectAs(t testing.TB, s *Stack, identity string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	seed, err := s.BusSeed(identity)
	if err != nil {
		t.Fatal(err)
	}
	secured, err := garmtool.BusFlags{URL: s.URLs().NATS, NKey: seed}.ConnectOptions()
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.URLs().NATS, append(secured, opts...)...)
	if err != nil {
		t.Fatalf("connecting as %s: %v", identity, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// approveInInbox signs persona in to the stack's approvals service and approves request id there,
// as the person the tour sends to the inbox would.
func approveInInbox(t *testing.T, s *Stack, persona, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	a, err := approvalstest.SignIn(ctx, s.URLs().Approvals, persona)
	if err != nil {
		t.Fatal(err)
	}
	if status, err := a.Decide(ctx, id, pending.Approved); err != nil || status != http.StatusOK {
		t.Fatalf("%s approving %s in the inbox: %d %v", persona, id, status, err)
	}
}

// grantFromInbox approves, as the demo's approver in the approvals inbox, the open request of
// subject for tool, and answers the grant the decision carries, read from the bucket as garmd
// reads it: what a caller presenting Garm-Approval would have spent, for tests that present the
// grant itself.
func grantFromInbox(t testing.TB, s *Stack, subject, tool string) string {
	t.Helper()
	nc := connectAs(t, s, OperatorIdentity)
	grant, err := inboxGrant(nc, s, subject, tool)
	if err != nil {
		t.Fatal(err)
	}
	return grant
}

// inboxGrant is grantFromInbox answering its error, for a handler that may not fail the test.
func inboxGrant(nc *nats.Conn, s *Stack, subject, tool string) (string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	store, err := pending.Open(ctx, js)
	if err != nil {
		return "", err
	}
	open, err := store.Open(ctx, 100)
	if err != nil {
		return "", err
	}
	for _, r := range open {
		if r.Subject != subject || r.Tool != tool {
			continue
		}
		a, err := approvalstest.SignIn(ctx, s.URLs().Approvals, bankDemo().approver)
		if err != nil {
			return "", err
		}
		if status, err := a.Decide(ctx, r.ID, pending.Approved); err != nil || status != http.StatusOK {
			return "", fmt.Errorf("approving %s in the inbox: %d %v", r.ID, status, err)
		}
		_, d, err := store.Get(ctx, r.ID)
		if err != nil || d == nil || d.Grant == "" {
			return "", fmt.Errorf("the approved request %s holds no grant: %+v %v", r.ID, d, err)
		}
		return d.Grant, nil
	}
	return "", fmt.Errorf("no open request of %s for %s in the inbox", subject, tool)
}

// devPost posts to path of the dev endpoint with the run's secret, as the
// quick-start's curl commands do, and fails the test unless it answers 200.
func devPost(t *testing.T, urls URLs, path string) {
	t.Helper()
	secret, err := devplane.ReadDevSecret(urls.Dev, urls.DevSecretFile)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, urls.Dev+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(devplane.DevSecretHeader, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, body)
	}
}
