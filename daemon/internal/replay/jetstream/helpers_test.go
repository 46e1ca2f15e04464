package jetstream_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// waitBound bounds every wait in these tests; none should come near it.
const waitBound = 20 * time.Second

// jsServer is an embedded NATS server with JetStream on a random loopback
// port, its store in a directory of the test's, so a restart finds what
// was stored before it.
type jsServer struct {
	mu       sync.Mutex
	srv      *server.Server
	storeDir string
	port     int
}

func startJetStream(t testing.TB) *jsServer {
	t.Helper()
	s := &jsServer{storeDir: t.TempDir(), port: server.RANDOM_PORT}
	s.start(t)
	t.Cleanup(s.shutdown)
	return s
}

func (s *jsServer) start(t testing.TB) {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		ServerName: "replay-jetstream-test",
		Host:       "127.0.0.1",
		Port:       s.port,
		JetStream:  true,
		StoreDir:   s.storeDir,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(waitBound) {
		srv.Shutdown()
		t.Fatalf("the embedded NATS server did not accept connections within %v", waitBound)
	}
	s.mu.Lock()
	s.srv = srv
	s.port = srv.Addr().(*net.TCPAddr).Port
	s.mu.Unlock()
}

// restart starts a server on the same port and store after shutdown.
func (s *jsServer) restart(t testing.TB) { s.start(t) }

func (s *jsServer) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

func (s *jsServer) url() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.ClientURL()
}

func connect(t testing.TB, s *jsServer) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.url(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// createBucket creates the grants bucket as cfg says, its name filled in.
func createBucket(t testing.TB, js jetstream.JetStream, cfg jetstream.KeyValueConfig) jetstream.KeyValue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	cfg.Bucket = wire.GrantsSpentBucket
	kv, err := js.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func bounded(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	t.Cleanup(cancel)
	return ctx
}
