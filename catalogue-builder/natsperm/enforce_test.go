package natsperm_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// waitFor bounds every wait for an event from the server.
const waitFor = 10 * time.Second

// confServer starts a nats-server from a configuration file that includes
// the derived permissions the way operators.md says to, with a user for
// garmd, one for the calculator's services and an agent with no
// permissions of its own. It answers the server's URL.
func confServer(t *testing.T, set *natsperm.Set) string {
	t.Helper()
	dir := t.TempDir()
	var perms bytes.Buffer
	if err := natsperm.WriteConf(&perms, set); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "garm-permissions.conf"), perms.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, id := range set.Identities {
		users = append(users, fmt.Sprintf("    { user = %q, password = %q, permissions = $%s }", id.Name, "pw-"+id.Name, natsperm.PermissionVariable(id.Name)))
	}
	users = append(users, `    { user = "agent", password = "pw-agent" }`)
	conf := fmt.Sprintf(`listen = "127.0.0.1:-1"
include "garm-permissions.conf"
authorization {
  default_permissions = $%s
  users = [
%s
  ]
}
`, natsperm.EveryoneElseVariable, strings.Join(users, "\n"))
	return serveConf(t, dir, conf)
}

// serveConf starts a nats-server on conf, written into dir, and returns
// its client URL.
func serveConf(t *testing.T, dir, conf string) string {
	t.Helper()
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server refused the configuration: %v\n%s", err, conf)
	}
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(waitFor) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return srv.ClientURL()
}

// client is a connection as user, with the server's asynchronous errors —
// permission violations among them — on violations.
type client struct {
	*nats.Conn
	violations chan error
}

func connectAs(t *testing.T, url, user string, opts ...nats.Option) *client {
	t.Helper()
	c := &client{violations: make(chan error, 16)}
	opts = append(opts, nats.UserInfo(user, "pw-"+user), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.violations <- err:
		default:
		}
	}))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("connecting as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	c.Conn = nc
	return c
}

// refused waits for the server to refuse what the client just did with a
// permissions violation naming subject.
func (c *client) refused(t *testing.T, subject string) {
	t.Helper()
	select {
	case err := <-c.violations:
		if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), subject) {
			t.Fatalf("the server answered %v, want a permissions violation for %q", err, subject)
		}
	case <-time.After(waitFor):
		t.Fatalf("the server did not refuse %q within %s", subject, waitFor)
	}
}

func TestANATSServerGivenTheConfFormEnforcesIt(t *testing.T) {
	set := natsperm.Derive(buildRoots(t, calculatorRoot).Artifact)
	url := confServer(t, set)
	const add, queue = "calc.v1.Calculator.Add", "calc.v1.Calculator"
	tool := connectAs(t, url, natsperm.ToolUser("calc.v1"))
	garmd := connectAs(t, url, natsperm.GarmdUser, nats.CustomInboxPrefix(natsperm.InboxPrefix(natsperm.GarmdUser)))
	agent := connectAs(t, url, "agent")

	if _, err := tool.QueueSubscribe(add, queue, func(m *nats.Msg) { _ = m.Respond([]byte("sum")) }); err != nil {
		t.Fatal(err)
	}
	if err := tool.Flush(); err != nil {
		t.Fatal(err)
	}

	t.Run("garmd calls the tool and the tool answers through the responses allowance", func(t *testing.T) {
		reply, err := garmd.Request(add, []byte("{}"), waitFor)
		if err != nil {
			t.Fatalf("garmd's call: %v", err)
		}
		if string(reply.Data) != "sum" {
			t.Fatalf("garmd got %q", reply.Data)
		}
	})
	t.Run("the tool cannot take its calls outside its queue group", func(t *testing.T) {
		if _, err := tool.Subscribe(add, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		tool.refused(t, add)
	})
	t.Run("the tool cannot publish", func(t *testing.T) {
		if err := tool.Publish("garm.v1.ledger.t.a", nil); err != nil {
			t.Fatal(err)
		}
		tool.refused(t, "garm.v1.ledger.t.a")
	})
	t.Run("garmd cannot read another identity's replies", func(t *testing.T) {
		if _, err := garmd.Subscribe("_INBOX.>", func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		garmd.refused(t, "_INBOX.>")
	})
	t.Run("garmd cannot purge the spent grants", func(t *testing.T) {
		if err := garmd.Publish("$JS.API.STREAM.PURGE.KV_GARM_GRANTS_SPENT", nil); err != nil {
			t.Fatal(err)
		}
		garmd.refused(t, "$JS.API.STREAM.PURGE.KV_GARM_GRANTS_SPENT")
	})
	t.Run("garmd cannot purge a limit's counters", func(t *testing.T) {
		if err := garmd.Publish("$JS.API.STREAM.PURGE.GARM_LIMITS_MINUTE", nil); err != nil {
			t.Fatal(err)
		}
		garmd.refused(t, "$JS.API.STREAM.PURGE.GARM_LIMITS_MINUTE")
	})
	t.Run("a tool cannot count against a limit", func(t *testing.T) {
		if err := tool.Publish("garm.limits.m.x.y.1.K", nil); err != nil {
			t.Fatal(err)
		}
		tool.refused(t, "garm.limits.m.x.y.1.K")
	})
	t.Run("an agent cannot call the tool", func(t *testing.T) {
		if err := agent.Publish(add, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		agent.refused(t, add)
	})
	t.Run("an agent cannot listen for the tool's calls", func(t *testing.T) {
		if _, err := agent.QueueSubscribe(add, queue, func(*nats.Msg) {}); err != nil {
			t.Fatal(err)
		}
		agent.refused(t, add)
	})
}
