package garmtooltest_test

import (
	"testing"
	"time"

	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go/jetstream"
)

// createOrders creates a file-stored stream and publishes one message on it.
func createOrders(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := testContext(t, 10*time.Second)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "orders.1", []byte("one order")); err != nil {
		t.Fatal(err)
	}
}

// assertOrdersHeld checks that the stream createOrders made is there with
// its message, waiting for the client to reconnect.
func assertOrdersHeld(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := testContext(t, 10*time.Second)
	stream, err := js.Stream(ctx, "ORDERS")
	if err != nil {
		t.Fatalf("the stream is gone: %v", err)
	}
	msg, err := stream.GetLastMsgForSubject(ctx, "orders.1")
	if err != nil {
		t.Fatalf("the stream's message is gone: %v", err)
	}
	if string(msg.Data) != "one order" {
		t.Fatalf("the stream holds %q, want %q", msg.Data, "one order")
	}
}

func TestAJetStreamServersStreamsSurviveARestart(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	url := s.URL()
	_, js := garmtooltest.ConnectJetStream(t, url)
	createOrders(t, js)
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if s.URL() != url {
		t.Errorf("the server came back at %s, not %s", s.URL(), url)
	}
	assertOrdersHeld(t, js)
}

func TestAStoppedJetStreamServerStartsAgainOnItsPortAndStore(t *testing.T) {
	s := garmtooltest.StartJetStream(t)
	url := s.URL()
	_, js := garmtooltest.ConnectJetStream(t, url)
	createOrders(t, js)

	s.Stop()
	s.Stop() // stopping a stopped server does nothing
	if s.URL() != url {
		t.Errorf("the stopped server's URL is %s, not %s", s.URL(), url)
	}
	ctx := testContext(t, 300*time.Millisecond)
	if _, err := js.Publish(ctx, "orders.2", []byte("while gone")); err == nil {
		t.Fatal("a publish to a stopped server was acknowledged")
	}

	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Error("starting a running server succeeded")
	}
	assertOrdersHeld(t, js)
}

func TestWithMaxPayloadSetsWhatTheServerAccepts(t *testing.T) {
	const maxPayload = 64 << 10
	s := garmtooltest.StartJetStream(t, garmtooltest.WithMaxPayload(maxPayload))
	nc, _ := garmtooltest.ConnectJetStream(t, s.URL())
	if got := nc.MaxPayload(); got != maxPayload {
		t.Fatalf("the server accepts %d bytes, want %d", got, maxPayload)
	}
	// A restart keeps it.
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	nc, _ = garmtooltest.ConnectJetStream(t, s.URL())
	if got := nc.MaxPayload(); got != maxPayload {
		t.Fatalf("after a restart the server accepts %d bytes, want %d", got, maxPayload)
	}
}

func TestAJetStreamServerNeedsAStoreDirectory(t *testing.T) {
	if s, err := garmtooltest.NewJetStreamServer(""); err == nil {
		s.Close()
		t.Fatal("NewJetStreamServer started a server with no store directory")
	}
}
