package garmd_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/runtime/garmtooltest"
)

const lostLine = "garmd: lost the bus connection; reconnecting"

// connectLogging connects to url with garmd's bus event handlers logging
// into logs; closed is closed once nats.go has run every callback of the
// connection's close (its callbacks run in order, the closed one last).
func connectLogging(t *testing.T, url string, logs *logBuffer) (nc *nats.Conn, closed chan struct{}) {
	t.Helper()
	closed = make(chan struct{})
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	opts := append(garmd.BusEventHandlers(logger),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
		nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, closed
}

// A connection garmd closes or drains itself — every shutdown, every
// reload of a dev plane — is not a lost bus: nothing warns of one.
func TestAConnectionClosedOnPurposeIsNotALostBus(t *testing.T) {
	t.Parallel()
	server := garmtooltest.StartServer(t)
	for _, end := range []struct {
		name  string
		close func(*nats.Conn) error
	}{
		{"closed", func(nc *nats.Conn) error { nc.Close(); return nil }},
		{"drained", func(nc *nats.Conn) error { return nc.Drain() }},
	} {
		logs := &logBuffer{}
		nc, closed := connectLogging(t, server.URL(), logs)
		if err := end.close(nc); err != nil {
			t.Fatal(err)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the connection never closed", end.name)
		}
		if strings.Contains(logs.String(), lostLine) {
			t.Errorf("%s on purpose, the log warns of a lost bus:\n%s", end.name, logs.String())
		}
	}
}

// A bus that goes away is still a lost bus, said with the error that
// broke the connection.
func TestABusThatGoesAwayIsALostBus(t *testing.T) {
	t.Parallel()
	server := garmtooltest.StartServer(t)
	logs := &logBuffer{}
	connectLogging(t, server.URL(), logs)
	server.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), lostLine) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never warned of the lost bus:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if l := logs.String(); strings.Contains(l, `"err":""`) || strings.Contains(l, `"err":null`) || strings.Contains(l, `"server":""`) {
		t.Errorf("the warning does not say what broke the connection, and where:\n%s", l)
	}
}
