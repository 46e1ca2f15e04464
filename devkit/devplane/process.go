package devplane

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// child is a process the dev plane started: a NATS node or a garmd
// replica. Its output goes to a file in the run directory; Wait runs in
// the background, so exited is closed however it ends, a kill -9 from
// outside included.
type child struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	mu     sync.Mutex
	err    error // Wait's answer, once exited is closed
}

// startChild starts bin with args, its standard output and error appended
// to logPath.
func startChild(name, logPath, bin string, args ...string) (*child, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		out.Close()
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.exited)
	}()
	return c, nil
}

// logTail is the end of the child's log, which says why it exited.
func (c *child) logTail() string {
	data, err := os.ReadFile(c.log)
	if err != nil {
		return err.Error()
	}
	const most = 2000
	return strings.TrimSpace(string(data[max(0, len(data)-most):]))
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// running says whether the child has not exited.
func (c *child) running() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// exitErr is how the child ended, once it has.
func (c *child) exitErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// signal sends sig to the child unless it has exited.
func (c *child) signal(sig os.Signal) error {
	if !c.running() {
		return nil
	}
	if err := c.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("%s (pid %d): %w", c.name, c.pid(), err)
	}
	return nil
}

// stop asks the child to stop (SIGTERM) and waits up to grace; then kills
// it (SIGKILL) and waits for that too.
func (c *child) stop(grace time.Duration) error {
	if err := c.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-c.exited:
		return nil
	case <-time.After(grace):
	}
	if err := c.signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-c.exited:
		return fmt.Errorf("%s (pid %d) did not stop within %s and was killed", c.name, c.pid(), grace)
	case <-time.After(grace):
		return fmt.Errorf("%s (pid %d) did not die of SIGKILL within %s", c.name, c.pid(), grace)
	}
}

// busConf is a node's nats-server configuration, written as JSON, which
// nats-server's configuration format reads: the same users and
// permissions the embedded server is given.
type busConf struct {
	ServerName    string         `json:"server_name"`
	Host          string         `json:"host"`
	Port          int            `json:"port"`
	HTTP          string         `json:"http,omitempty"`
	JetStream     map[string]any `json:"jetstream"`
	Cluster       *clusterConf   `json:"cluster,omitempty"`
	Authorization struct {
		Users []userConf `json:"users"`
	} `json:"authorization"`
}

type clusterConf struct {
	Name   string   `json:"name"`
	Host   string   `json:"host"`
	Port   int      `json:"port"`
	Routes []string `json:"routes"`
}

type userConf struct {
	NKey        string     `json:"nkey"`
	Permissions *permsConf `json:"permissions,omitempty"`
}

type permsConf struct {
	Publish   *rulesConf `json:"publish,omitempty"`
	Subscribe *rulesConf `json:"subscribe,omitempty"`
	Responses *struct {
		Max int `json:"max"`
	} `json:"allow_responses,omitempty"`
}

type rulesConf struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// writeBusConf writes opts as a nats-server configuration file at path.
func writeBusConf(path string, opts *server.Options) error {
	conf := busConf{
		ServerName: opts.ServerName,
		Host:       opts.Host,
		Port:       opts.Port,
		JetStream:  map[string]any{"store_dir": opts.StoreDir},
	}
	if opts.HTTPPort != 0 {
		conf.HTTP = net.JoinHostPort(opts.HTTPHost, strconv.Itoa(opts.HTTPPort))
	}
	if opts.Cluster.Port != 0 {
		conf.Cluster = &clusterConf{Name: opts.Cluster.Name, Host: opts.Cluster.Host, Port: opts.Cluster.Port}
		for _, r := range opts.Routes {
			conf.Cluster.Routes = append(conf.Cluster.Routes, r.String())
		}
	}
	rules := func(p *server.SubjectPermission) *rulesConf {
		if p == nil {
			return nil
		}
		return &rulesConf{Allow: p.Allow, Deny: p.Deny}
	}
	for _, u := range opts.Nkeys {
		uc := userConf{NKey: u.Nkey}
		if p := u.Permissions; p != nil {
			uc.Permissions = &permsConf{Publish: rules(p.Publish), Subscribe: rules(p.Subscribe)}
			if p.Response != nil {
				uc.Permissions.Responses = &struct {
					Max int `json:"max"`
				}{p.Response.MaxMsgs}
			}
		}
		conf.Authorization.Users = append(conf.Authorization.Users, uc)
	}
	// nats-server's format reads JSON, but not its \u escapes, which
	// HTML escaping would write for the '>' of a wildcard.
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(conf); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// waitForNATS waits, bounded, until a NATS server answers its INFO line
// at addr, or c exits.
func waitForNATS(c *child, addr string) error {
	deadline := time.Now().Add(busReadyTimeout)
	for {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			conn.Close()
			if strings.HasPrefix(line, "INFO ") {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) did not accept connections on %s within %s; see %s", c.name, c.pid(), addr, busReadyTimeout, c.log)
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited (%v) before accepting connections: %s", c.name, c.exitErr(), c.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// confPath is the node's nats-server configuration file.
func (n *node) confPath() string { return filepath.Join(n.dir, n.name+".conf") }

// startProcess starts the node's nats-server process on its configuration
// file, unless it runs, and waits, bounded, until it takes connections.
func (n *node) startProcess() error {
	if n.proc != nil && n.proc.running() {
		return nil
	}
	if err := writeBusConf(n.confPath(), n.opts); err != nil {
		return fmt.Errorf("%s's configuration: %w", n.name, err)
	}
	proc, err := startChild("NATS node "+n.name, filepath.Join(n.dir, n.name+".log"), n.bin, "-c", n.confPath())
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(n.opts.Host, strconv.Itoa(n.opts.Port))
	if err := waitForNATS(proc, addr); err != nil {
		_ = proc.stop(busReadyTimeout)
		return err
	}
	n.proc, n.url = proc, "nats://"+addr
	return nil
}

// monitorURL is the node's monitoring endpoint, "" when it has none.
func (n *node) monitorURL() string {
	if n.opts.HTTPPort == 0 {
		return ""
	}
	return "http://" + net.JoinHostPort(n.opts.HTTPHost, strconv.Itoa(n.opts.HTTPPort))
}

// waitHealthy waits, bounded by readyTimeout, until the node's /healthz
// answers 200: JetStream has its meta leader and its streams are current.
// A node started again answers only once it has caught up, so a client
// sent to it at once is not left waiting on a request no leader answers.
func (n *node) waitHealthy(ctx context.Context) error {
	url := n.monitorURL()
	if url == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s (pid %d) did not become healthy (%s/healthz) within %s", n.name, n.pid(), url, readyTimeout)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pid is the node's process id, 0 when it is embedded or not running.
func (n *node) pid() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.proc == nil || !n.proc.running() {
		return 0
	}
	return n.proc.pid()
}

// startReplicaProcess starts garmd replica i as a process of
// Options.GarmdBinary, connected to seeds, with the flags startReplica
// gives the embedded one, and waits until it answers ready. A replica
// killed from outside is logged, not a failure of the plane: the front
// skips it.
func (s *Plane) startReplicaProcess(ctx context.Context, i int, run *daemonRun, seeds string) (string, error) {
	garmdSeed, err := s.ids.seed(natsperm.GarmdUser)
	if err != nil {
		return "", err
	}
	// The process binds what it is told, so a free port is chosen here.
	for _, addr := range []*string{&run.listen, &run.admin} {
		if host, port, err := net.SplitHostPort(*addr); err == nil && port == "0" {
			ports, err := freePorts(host, 1)
			if err != nil {
				return "", err
			}
			*addr = net.JoinHostPort(host, strconv.Itoa(ports[0]))
		}
	}
	args := []string{
		"serve",
		"--catalogue", s.cataloguePath(),
		"--catalogue-keys", s.signer.keys,
		"--nats", seeds,
		"--nats-nkey", garmdSeed,
		"--listen", run.listen,
		"--admin-listen", run.admin,
		"--issuer", s.idp.Issuer(),
		"--jwks", s.idpSrv.JWKSURL(),
		"--audience", s.idp.Audience(),
		"--hash-key-file", s.hashKeyFile,
		"--grant-issuer", s.approvals.svc.GrantIssuer(),
		"--grant-jwks", s.urls.Approvals + approvals.JWKSPath,
		"--approvals",
		"--approvals-url", s.urls.Approvals,
		"--approval-state-key-file", s.approvalStateKeyFile,
		"--audit-stream-retention", "0",
		"--ledger-stream",
		"--notify",
		"--limits",
		"--limit-replicas", strconv.Itoa(s.streamReplicas()),
		"--mcp",
		"--loopback-hosts-only",
		"--min-replicas", strconv.Itoa(s.streamReplicas()),
	}
	if err := s.waitForStreamLeaders(ctx); err != nil {
		return "", err
	}
	name := fmt.Sprintf("garmd replica %d", i+1)
	proc, err := startChild(name, filepath.Join(s.runDir, fmt.Sprintf("garmd-%d.log", i+1)), s.opts.GarmdBinary, args...)
	if err != nil {
		return "", err
	}
	stopped := make(chan struct{})
	done := make(chan error, 1)
	s.daemonMu.Lock()
	run.proc = proc
	run.stop = sync.OnceFunc(func() { close(stopped) })
	run.done = done
	s.daemonMu.Unlock()
	go func() {
		select {
		case <-stopped:
			done <- proc.stop(closeGrace)
		case <-proc.exited:
			if !s.closing.Load() {
				s.logger.Warn("a garmd replica exited; the front skips it", "replica", i+1, "pid", proc.pid(), "err", proc.exitErr(), "log", proc.log)
			}
			<-stopped
			done <- nil
		}
	}()
	ready, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-proc.exited:
			cancel()
		case <-ready.Done():
		}
	}()
	if err := waitReady(ready, "http://"+run.admin+"/readyz"); err != nil {
		if !proc.running() {
			return "", fmt.Errorf("%s exited (%v) before it was ready: %s", name, proc.exitErr(), proc.logTail())
		}
		return "", fmt.Errorf("%s (pid %d, log %s): %w", name, proc.pid(), proc.log, err)
	}
	return "http://" + run.listen + "/mcp", nil
}

// closeGrace is how long a replica process has to drain after SIGTERM
// before it is killed.
const closeGrace = 15 * time.Second

// replicaRunning says whether replica i serves: an embedded one always, a
// process while it runs.
func (s *Plane) replicaRunning(i int) bool {
	s.daemonMu.Lock()
	defer s.daemonMu.Unlock()
	if i >= len(s.daemons) {
		return false
	}
	p := s.daemons[i].proc
	return p == nil || p.running()
}

// StartReplica starts garmd replica i (1-based) again when it runs as a
// process and that process has exited (a kill -9 from outside), on the
// same addresses, given every node as a seed.
func (s *Plane) StartReplica(ctx context.Context, i int) error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if i < 1 || i > len(s.daemons) {
		return fmt.Errorf("no replica %d: the plane has %d", i, len(s.daemons))
	}
	run := s.daemons[i-1]
	s.daemonMu.Lock()
	proc, stop, done := run.proc, run.stop, run.done
	s.daemonMu.Unlock()
	if proc == nil {
		return fmt.Errorf("replica %d runs in the dev plane's process", i)
	}
	if proc.running() {
		return nil
	}
	// The exited process's watcher answers at once.
	if stop != nil {
		stop()
		<-done
	}
	_, err := s.startReplicaProcess(ctx, i-1, run, s.bus.seedsFrom((i-1)%len(s.bus.nodes)))
	return err
}

// ReplicaPID is the process id of replica i (1-based) when the replicas
// run as processes and it runs: 0 otherwise.
func (s *Plane) ReplicaPID(i int) int {
	s.daemonMu.Lock()
	defer s.daemonMu.Unlock()
	if i < 1 || i > len(s.daemons) || s.daemons[i-1].proc == nil || !s.daemons[i-1].proc.running() {
		return 0
	}
	return s.daemons[i-1].proc.pid()
}

// serveReplica is POST /replicas/{n}/start on the dev endpoint.
func (s *Plane) serveReplica(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscan(r.PathValue("n"), &i); err != nil {
		http.Error(w, "no such replica", http.StatusNotFound)
		return
	}
	if err := s.StartReplica(r.Context(), i); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	fmt.Fprintf(w, "replica %d: started (pid %d)\n", i, s.ReplicaPID(i))
}

// waitForStreamLeaders waits, bounded by readyTimeout, until every stream
// garmd checks at startup (the bucket's included) has a leader. Right
// after a node has come back, JetStream may still be electing them, and a
// replica started then would spend its startup checks' whole bound on a
// request no leader answers.
func (s *Plane) waitForStreamLeaders(ctx context.Context) error {
	js, err := jetstream.New(s.busConn)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, name := range append([]string{wire.LedgerStream, wire.AuditStream, wire.NotifyStream, "KV_" + wire.GrantsSpentBucket, "KV_" + wire.ApprovalsBucket}, wire.LimitStreams()...) {
		for {
			attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
			stream, err := js.Stream(attempt, name)
			var info *jetstream.StreamInfo
			if err == nil {
				info, err = stream.Info(attempt)
			}
			cancelAttempt()
			if err == nil && (info.Cluster == nil || info.Cluster.Leader != "") {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("stream %s has no leader within %s: %v", name, readyTimeout, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
