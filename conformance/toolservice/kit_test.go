package toolservice_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/garm-dev/garm/conformance/reference"
	"github.com/garm-dev/garm/conformance/toolservice"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
)

// serveEnv makes the test binary the Go service under test: the kit's exec
// mode starts it again with this set and NATS_URL naming the bus.
const serveEnv = "GARM_CONFORMANCE_SERVE_REFERENCE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(reference.ServeProcess(os.Getenv("NATS_URL")))
	}
	os.Exit(m.Run())
}

// execProcess is a started service process.
type execProcess struct{ cmd *exec.Cmd }

func (p execProcess) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }
func (p execProcess) Wait() error                     { return p.cmd.Wait() }
func (p execProcess) Kill()                           { _ = p.cmd.Process.Kill() }

func startSelf(url string) func(context.Context) (toolservice.Process, error) {
	return func(context.Context) (toolservice.Process, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), serveEnv+"=1", "NATS_URL="+url)
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return execProcess{cmd}, nil
	}
}

func TestTheShippedCasesLoadAndAreMany(t *testing.T) {
	t.Parallel()
	cases, err := toolservice.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 50 {
		t.Fatalf("%d shipped cases, want at least 50", len(cases))
	}
}

func TestTheGoRuntimePassesTheWholeKit(t *testing.T) {
	srv := garmtooltest.StartServer(t)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cases, err := toolservice.Shipped()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	results, err := toolservice.Run(ctx, toolservice.Config{Conn: nc, Start: startSelf(srv.URL()), Out: &out}, cases)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if toolservice.Failed(results) || strings.Contains(out.String(), "skip ") {
		t.Fatalf("the Go runtime does not pass the whole kit:\n%s", out.String())
	}
}
