package natsbus_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/garm-dev/garm/daemon/internal/transport"
	"github.com/garm-dev/garm/daemon/internal/transport/natsbus"
)

// startSecuredServer is an embedded nats-server on a random loopback port
// where user "garmd" may publish anywhere but on forbidden, and user
// "tool" anywhere.
func startSecuredServer(t *testing.T, forbidden string) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		Users: []*server.User{
			{Username: "garmd", Password: "pw-garmd", Permissions: &server.Permissions{
				Publish: &server.SubjectPermission{Allow: []string{">"}, Deny: []string{forbidden}},
			}},
			{Username: "tool", Password: "pw-tool"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return "nats://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Addr().(*net.TCPAddr).Port))
}

// A request the bus refuses for lack of permission ends at once with
// ErrForbidden, not at its deadline with ErrTimeout; requests on other
// subjects are untouched, and the connection's own error handler still
// hears of the violation.
func TestARequestTheBusRefusesIsForbiddenAtOnceNotATimeout(t *testing.T) {
	const secret, echo = "t.v1.Secret.Call", "t.v1.Echo.Call"
	url := startSecuredServer(t, secret)

	tool, err := nats.Connect(url, nats.UserInfo("tool", "pw-tool"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tool.Close)
	for _, subject := range []string{secret, echo} {
		if _, err := tool.Subscribe(subject, func(m *nats.Msg) { _ = m.Respond(m.Data) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := tool.Flush(); err != nil {
		t.Fatal(err)
	}

	heard := make(chan error, 16)
	nc, err := nats.Connect(url, nats.UserInfo("garmd", "pw-garmd"), nats.CustomInboxPrefix("_INBOX.garmd"),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { heard <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r := natsbus.New(nc)

	// A deadline far enough that a refusal mistaken for a slow tool shows
	// as ErrTimeout; a context that cannot end, as the chain's.
	ctx := context.WithoutCancel(context.Background())
	far := func() time.Time { return time.Now().Add(30 * time.Second) }
	type answer struct {
		reply *transport.Reply
		err   error
	}
	refused := make(chan answer, 3)
	for range cap(refused) {
		go func() {
			reply, err := r.Request(ctx, &transport.Request{Subject: secret, Invocation: "inv", Body: []byte("x"), Deadline: far()})
			refused <- answer{reply, err}
		}()
	}
	for range cap(refused) {
		if a := <-refused; !errors.Is(a.err, transport.ErrForbidden) {
			t.Errorf("a request on a subject garmd may not publish on ended with %v (reply %+v), want ErrForbidden", a.err, a.reply)
		}
	}
	reply, err := r.Request(ctx, &transport.Request{Subject: echo, Invocation: "inv", Body: []byte("ping"), Deadline: far()})
	if err != nil || string(reply.Body) != "ping" {
		t.Errorf("a request on an allowed subject after the refusals: %v, %+v", err, reply)
	}
	select {
	case err := <-heard:
		if !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("the connection's own handler heard %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the connection's own error handler never heard of the violation")
	}
}
