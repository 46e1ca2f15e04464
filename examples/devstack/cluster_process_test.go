package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// make cluster runs each NATS node and each garmd replica as a process of
// its own. A call through the front succeeds; node 2's process is killed
// with SIGKILL by its pid, as the quick-start says, and calls through the
// front recover with only 503 meanwhile; node 2 is started again through
// the dev endpoint, as a new process, and both replicas serve. Replica 2
// killed the same way, the front serves from replica 1 alone, and replica
// 2 starts again; a reload restarts both. When the stack closes, every
// process it started is gone.
func TestTheProcessClusterServesThroughAKilledNodeAndStopsEveryProcess(t *testing.T) {
	o := testOptions(t)
	o.Nodes, o.Replicas = ClusterNodes, ClusterReplicas
	o.NATSServerBinary, o.GarmdBinary = buildClusterBinaries(t)
	var pids []int
	t.Cleanup(func() {
		// Registered before the stack's Close, so it runs after it.
		for _, pid := range pids {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("pid %d still exists after the stack closed (kill -0: %v)", pid, err)
			}
		}
	})
	s := startStack(t, o)
	urls := s.URLs()
	t.Cleanup(func() {
		// Before the stack's Close removes them.
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(urls.Logs, "*.log"))
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				var keep []string
				for _, line := range strings.Split(string(data), "\n") {
					if !strings.Contains(line, "Route connection created") && !strings.Contains(line, "Router connection closed") {
						keep = append(keep, line)
					}
				}
				t.Logf("%s:\n%s", filepath.Base(l), strings.Join(keep[max(0, len(keep)-60):], "\n"))
			}
		}
	})
	if len(urls.NodePIDs) != ClusterNodes || len(urls.ReplicaPIDs) != ClusterReplicas {
		t.Fatalf("the stack runs node processes %v and replica processes %v, want %d and %d", urls.NodePIDs, urls.ReplicaPIDs, ClusterNodes, ClusterReplicas)
	}
	pids = append(append(pids, urls.NodePIDs...), urls.ReplicaPIDs...)
	for _, pid := range pids {
		if pid == os.Getpid() {
			t.Fatalf("pid %d is the test's own", pid)
		}
	}
	node2 := urls.NodePIDs[1]
	for _, want := range []string{fmt.Sprintf("kill -9 %d", node2), urls.Dev + "/nodes/2/start", fmt.Sprintf("kill -9 %d", urls.ReplicaPIDs[1]), urls.Dev + "/replicas/2/start"} {
		if !strings.Contains(s.QuickStart(), want) {
			t.Errorf("the quick-start does not say %q:\n%s", want, s.QuickStart())
		}
	}
	c := newClient(t, s)
	d := bankDemo()
	route := ""
	for _, tool := range s.Catalogue().Artifact.Tools() {
		if tool.FQN == d.customerTool {
			route = tool.Method
		}
	}
	token, body := c.token(d.support, ""), mustJSON(t, d.customerRequest)
	if a := c.call(route, token, body); a.status != http.StatusOK {
		t.Fatalf("a call through the front: %d %s", a.status, a.body)
	}

	if err := syscall.Kill(node2, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", node2, err)
	}
	servesAgain := func(after string) {
		t.Helper()
		// While a replica reconnects and JetStream elects leaders again, a
		// call may be refused 503; the plane serves again within the
		// bound. Two successes in a row are both replicas.
		deadline, inARow := time.Now().Add(waitTimeout), 0
		for inARow < ClusterReplicas {
			a := c.call(route, token, body)
			switch {
			case a.status == http.StatusOK:
				inARow++
			case a.status == http.StatusServiceUnavailable && time.Now().Before(deadline):
				inARow = 0
				time.Sleep(100 * time.Millisecond)
			default:
				t.Fatalf("a call through the front after %s: %d %s", after, a.status, a.body)
			}
		}
	}
	servesAgain("node 2 was killed")
	// The plane starts a node again only once it has seen it exit.
	for deadline := time.Now().Add(waitTimeout); s.NodePID(2) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plane did not see node 2 (pid %d) exit", node2)
		}
	}

	devPost(t, urls, "/nodes/2/start")
	restarted := s.NodePID(2)
	if restarted == 0 || restarted == node2 {
		t.Fatalf("node 2 started again as pid %d (it was %d)", restarted, node2)
	}
	pids = append(pids, restarted)
	servesAgain("node 2 started again")

	// Replica 2 killed: once the plane has seen its process exit, the
	// front sends every call to replica 1, so none is answered 502.
	replica2 := urls.ReplicaPIDs[1]
	if err := syscall.Kill(replica2, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %d: %v", replica2, err)
	}
	for deadline := time.Now().Add(waitTimeout); s.ReplicaPID(2) != 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the plane did not see replica 2 (pid %d) exit", replica2)
		}
	}
	servesAgain("replica 2 was killed")
	devPost(t, urls, "/replicas/2/start")
	if pid := s.ReplicaPID(2); pid == 0 || pid == replica2 {
		t.Fatalf("replica 2 started again as pid %d (it was %d)", pid, replica2)
	} else {
		pids = append(pids, pid)
	}
	servesAgain("replica 2 started again")

	// A reload sends every node its users again (SIGHUP) and restarts
	// the replicas' processes.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := s.Reload(ctx); err != nil {
		t.Fatalf("reload: %v", err)
	}
	pids = append(pids, s.ReplicaPID(1), s.ReplicaPID(2))
	servesAgain("a reload")
}

// post POSTs to url and needs 200.
// buildClusterBinaries builds nats-server, at the version go.mod pins, and
// garmd from this tree, as make cluster does, into the test's directory.
func buildClusterBinaries(t *testing.T) (natsServer, garmd string) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	natsServer, garmd = filepath.Join(dir, "nats-server"), filepath.Join(dir, "garmd")
	for _, b := range []struct{ out, pkg string }{
		{natsServer, "github.com/nats-io/nats-server/v2"},
		{garmd, "./daemon/cmd/garmd"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.out, b.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -o %s %s: %v\n%s", b.out, b.pkg, err, out)
		}
	}
	return natsServer, garmd
}
