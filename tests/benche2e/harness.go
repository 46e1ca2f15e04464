package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/garm-dev/garm/devkit/idp"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
)

const (
	// route is the call every target makes.
	route = "/calc.v1.Calculator/Add"
	// callTimeout bounds each call of the load generator and the bridge.
	callTimeout = 5 * time.Second
	// readyTimeout bounds each process's start.
	readyTimeout = 60 * time.Second
	// stopGrace is how long a process has after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// The tenant and caller of the direct and bridged calls; garmd's come
	// from the token.
	benchTenant  = "bench"
	benchSubject = "user:bench@bench.example"
	// jsonBody is the call in JSON, as an agent sends it to garmd.
	jsonBody = `{"a":40,"b":2.5}`
)

// personas is the one caller garmd is given: allowed the calculator
// (public, read) and nothing else.
const personas = `tenant: bench
roles:
  anyone:
    clearance: public
    verbs: [read]
users:
  bench:
    subject: user:bench@bench.example
    roles: [anyone]
`

// target is one way of making the call.
type target struct {
	name string
	// front is the process whose CPU per call is reported ("" for none).
	front *child
	// bus and tool are nats-server and the tool, whose CPU per call is
	// reported too: a front end that sends more (garmd's invocation carries
	// the caller, its ledger goes to a stream) costs them more.
	bus, tool *child
	args      []string
}

type options struct {
	natsServer, garmd, calcd, catalogue string
	compare                             string
	rounds, callers                     int
	phase, warmup, budget               time.Duration
	targets                             string
	garmdEnv, compareEnv, bridgeEnv     repeated
	compareArgs                         repeated
	keep, otlpSink, otlpBoth            bool
	otlpSample                          float64
}

func runHarness(ctx context.Context, args []string) error {
	var o options
	fs := flag.NewFlagSet("benche2e run", flag.ContinueOnError)
	fs.StringVar(&o.natsServer, "nats-server", ".tmp/bin/nats-server", "nats-server `binary` (make nats-server)")
	fs.StringVar(&o.garmd, "garmd", ".tmp/bin/garmd", "garmd `binary` (make garmd)")
	fs.StringVar(&o.calcd, "calcd", ".tmp/bin/calcd", "calcd `binary`, the tool (make calcd)")
	fs.StringVar(&o.compare, "compare", "", "a second garmd `binary` (another build) measured as the target \"compare\" in the same rounds, JSON body: before and after, paired")
	fs.StringVar(&o.catalogue, "catalogue", ".tmp/catalogue/calculator.binpb", "the calculator's catalogue `file` (make catalogue)")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds; each measures every target once")
	fs.IntVar(&o.callers, "callers", 32, "concurrent callers of the throughput phase")
	fs.DurationVar(&o.phase, "phase", 2*time.Second, "how long each phase counts calls")
	fs.DurationVar(&o.warmup, "warmup", 300*time.Millisecond, "calls made before each phase counts")
	fs.DurationVar(&o.budget, "budget", 5*time.Minute, "the whole run stops by then, finished or not")
	fs.StringVar(&o.targets, "targets", "direct,bridge,garmd,garmd-proto", "the targets measured, comma-separated (direct, bridge, garmd, garmd-proto)")
	fs.Var(&o.garmdEnv, "garmd-env", "an extra `NAME=value` in garmd's environment, e.g. GOGC=400 (repeatable)")
	fs.Var(&o.compareEnv, "compare-env", "an extra `NAME=value` in the compared garmd's environment, after --garmd-env's (repeatable): --compare .tmp/bin/garmd --compare-env GOGC=100 measures one build under two settings")
	fs.Var(&o.bridgeEnv, "bridge-env", "an extra `NAME=value` in the bridge's environment (repeatable): with --garmd-env, both front ends under one setting, e.g. GOMAXPROCS=1")
	fs.BoolVar(&o.keep, "keep", false, "keep the working directory (the processes' logs) afterwards")
	fs.Var(&o.compareArgs, "compare-arg", "an extra `argument` of the compared garmd's serve command (repeatable): --compare .tmp/bin/garmd --otlp-sink --compare-arg --trace-steps measures a span per step")
	fs.BoolVar(&o.otlpSink, "otlp-sink", false, "trace the compared garmd, exporting over OTLP/HTTP to a receiver on loopback that drops what it gets: --compare .tmp/bin/garmd --otlp-sink measures tracing on against off")
	fs.BoolVar(&o.otlpBoth, "otlp-sink-both", false, "with --otlp-sink, trace the first garmd too, alike: --compare-arg then compares two ways of tracing, e.g. --compare-arg --trace-steps")
	fs.Float64Var(&o.otlpSample, "otlp-sample", 1, "with --otlp-sink, the share of calls traced (a `ratio` in (0, 1]): 1 is always_on, less is traceidratio")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.rounds < 1 || o.callers < 1 || o.phase <= 0 {
		return errors.New("--rounds, --callers and --phase must be positive")
	}
	if o.otlpSample <= 0 || o.otlpSample > 1 {
		return errors.New("--otlp-sample is a ratio in (0, 1]")
	}
	if o.otlpBoth && !o.otlpSink {
		return errors.New("--otlp-sink-both goes with --otlp-sink")
	}
	if o.otlpSink {
		if o.compare == "" {
			return errors.New("--otlp-sink traces the compared garmd: give --compare")
		}
		sink, err := startOTLPSink()
		if err != nil {
			return err
		}
		defer func() {
			sink.stop()
			fmt.Printf("OTLP sink: %d exports, %d bytes from the compared garmd\n", sink.exports.Load(), sink.bytes.Load())
		}()
		traced := append([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.url}, sampler(o.otlpSample)...)
		if o.otlpBoth {
			// The compared garmd's environment starts with garmd's.
			o.garmdEnv = append(o.garmdEnv, traced...)
		} else {
			o.compareEnv = append(o.compareEnv, traced...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.budget)
	defer cancel()

	dir, err := os.MkdirTemp("", "garm-bench-e2e-")
	if err != nil {
		return err
	}
	p := &plane{dir: dir}
	defer func() {
		p.stopAll()
		if o.keep {
			fmt.Fprintln(os.Stderr, "benche2e: logs kept in", dir)
		} else {
			_ = os.RemoveAll(dir)
		}
	}()
	targets, err := p.start(ctx, o)
	if err != nil {
		return fmt.Errorf("%w (logs in %s)", err, dir)
	}
	fmt.Print(header(o, p))
	rounds, err := runRounds(ctx, o, p, targets)
	if len(rounds) > 0 {
		fmt.Print(table(rounds, o))
	}
	if o.otlpSink {
		// A span the batcher dropped was never exported: the figures
		// hold only when none was.
		fmt.Println(droppedSpans(ctx, "http://"+p.compareAdmin+"/metrics"))
	}
	if err != nil {
		o.keep = true
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("--budget %s reached (%w)", o.budget, err)
		}
		return fmt.Errorf("stopped after %d of %d rounds: %w", len(rounds), o.rounds, err)
	}
	return nil
}

// plane is the processes of one run.
type plane struct {
	dir      string
	children []*child
	natsURL  string
	garmdURL string
	bridge   string
	token    string
	garmdP   *child
	bridgeP  *child
	compareP *child
	// compareAdmin is the compared garmd's admin address.
	compareAdmin string
	// bus and tool are nats-server and calcd, which every target's call
	// passes through.
	bus, tool *child
	idpSrv    *idp.Server
}

func (p *plane) start(ctx context.Context, o options) ([]target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	for _, bin := range []string{o.natsServer, o.garmd, o.calcd, o.catalogue} {
		if _, err := os.Stat(bin); err != nil {
			return nil, fmt.Errorf("%s: %w (make bench-e2e builds it)", bin, err)
		}
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	natsAddr := loopback(ports[0])
	p.natsURL = "nats://" + natsAddr
	nats, err := p.startChild("nats-server", o.natsServer, nil, "-a", "127.0.0.1", "-p", strconv.Itoa(ports[0]), "-js", "-sd", filepath.Join(p.dir, "jetstream"))
	if err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, nats, natsAddr); err != nil {
		return nil, err
	}
	if err := createLedgerStream(ctx, p.natsURL); err != nil {
		return nil, err
	}
	calcd, err := p.startChild("calcd", o.calcd, nil, "--nats", p.natsURL)
	if err != nil {
		return nil, err
	}
	p.bus, p.tool = nats, calcd

	people, err := idp.ParsePersonas([]byte(personas))
	if err != nil {
		return nil, err
	}
	issuer, err := idp.New(people, idp.Options{TokenTTL: o.budget + time.Hour})
	if err != nil {
		return nil, err
	}
	if p.idpSrv, err = issuer.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	if p.token, err = issuer.Token("bench", ""); err != nil {
		return nil, err
	}
	keyFile := filepath.Join(p.dir, "hash.key")
	if err := os.WriteFile(keyFile, []byte("benche2e's hash key, not a secret\n"), 0o600); err != nil {
		return nil, err
	}
	startGarmd := func(name, bin string, env []string, listen, admin string, extra ...string) (*child, error) {
		c, err := p.startChild(name, bin, env, append([]string{"serve",
			"--catalogue", o.catalogue, "--nats", p.natsURL,
			"--listen", listen, "--admin-listen", admin,
			"--issuer", issuer.Issuer(), "--jwks", p.idpSrv.JWKSURL(), "--audience", issuer.Audience(),
			"--hash-key-file", keyFile, "--ledger-stream", "--tool-timeout", callTimeout.String()}, extra...)...)
		if err != nil {
			return nil, err
		}
		return c, waitHTTP(ctx, c, "http://"+admin+"/readyz")
	}
	listen := loopback(ports[1])
	p.garmdURL = "http://" + listen + route
	if p.garmdP, err = startGarmd("garmd", o.garmd, o.garmdEnv, listen, loopback(ports[2])); err != nil {
		return nil, err
	}
	var compareURL string
	if o.compare != "" {
		compareURL = "http://" + loopback(ports[4]) + route
		p.compareAdmin = loopback(ports[5])
		if p.compareP, err = startGarmd("garmd-compare", o.compare, append(slices.Clone(o.garmdEnv), o.compareEnv...), loopback(ports[4]), loopback(ports[5]), o.compareArgs...); err != nil {
			return nil, err
		}
		o.targets += ",compare"
	}
	bridgeAddr := loopback(ports[3])
	p.bridge = "http://" + bridgeAddr + route
	if p.bridgeP, err = p.startChild("bridge", self, o.bridgeEnv, "bridge", "--nats", p.natsURL, "--listen", bridgeAddr); err != nil {
		return nil, err
	}
	if err := waitTCP(ctx, p.bridgeP, bridgeAddr); err != nil {
		return nil, err
	}

	binary, err := proto.Marshal(&calcv1.AddRequest{A: proto.Float64(40), B: proto.Float64(2.5)})
	if err != nil {
		return nil, err
	}
	bin := hex.EncodeToString(binary)
	all := map[string]target{
		"direct": {name: "direct", args: []string{"--target", "direct", "--nats", p.natsURL, "--subject", wire.Subject(route), "--body", bin}},
		"bridge": {name: "bridge", front: p.bridgeP, args: []string{"--target", "http", "--url", p.bridge, "--body", bin}},
		"garmd": {name: "garmd", front: p.garmdP, args: []string{"--target", "http", "--url", p.garmdURL, "--token", p.token,
			"--content-type", "application/json", "--body", jsonBody}},
		"garmd-proto": {name: "garmd-proto", front: p.garmdP, args: []string{"--target", "http", "--url", p.garmdURL, "--token", p.token, "--body", bin}},
		"compare": {name: "compare", front: p.compareP, args: []string{"--target", "http", "--url", compareURL, "--token", p.token,
			"--content-type", "application/json", "--body", jsonBody}},
	}
	var targets []target
	for name := range strings.SplitSeq(o.targets, ",") {
		t, ok := all[strings.TrimSpace(name)]
		if !ok {
			return nil, fmt.Errorf("--targets: unknown target %q", name)
		}
		t.bus, t.tool = p.bus, p.tool
		targets = append(targets, t)
	}
	return targets, nil
}

// createLedgerStream creates GARM_LEDGER as the dev stack does, so garmd
// publishes its rows in batches as a production plane does.
func createLedgerStream(ctx context.Context, natsURL string) error {
	nc, err := nats.Connect(natsURL, nats.Name("benche2e"))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, Storage: jetstream.FileStorage,
	})
	return err
}

// stopAll ends every process this run started, by its PID, newest first.
func (p *plane) stopAll() {
	if p.idpSrv != nil {
		_ = p.idpSrv.Close()
	}
	for i := len(p.children) - 1; i >= 0; i-- {
		if err := p.children[i].stop(stopGrace); err != nil {
			fmt.Fprintln(os.Stderr, "benche2e:", err)
		}
	}
}

// child is a process this run started.
type child struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func (p *plane) startChild(name, bin string, env []string, args ...string) (*child, error) {
	logPath := filepath.Join(p.dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	c := &child{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(c.exited)
	}()
	p.children = append(p.children, c)
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop sends SIGTERM to the child's PID, then SIGKILL after grace.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.exited:
		return nil
	case <-time.After(grace):
	}
	_ = c.cmd.Process.Kill()
	<-c.exited
	return fmt.Errorf("%s (pid %d) did not stop within %s and was killed", c.name, c.pid(), grace)
}

func (c *child) failed() error {
	data, _ := os.ReadFile(c.log)
	return fmt.Errorf("%s (pid %d) exited before it was ready: %s", c.name, c.pid(), strings.TrimSpace(string(data[max(0, len(data)-1500):])))
}

func waitTCP(ctx context.Context, c *child, addr string) error {
	return waitFor(ctx, c, func() bool {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
}

func waitHTTP(ctx context.Context, c *child, u string) error {
	client := &http.Client{Timeout: time.Second}
	return waitFor(ctx, c, func() bool {
		resp, err := client.Get(u)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func waitFor(ctx context.Context, c *child, ready func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for !ready() {
		select {
		case <-c.exited:
			return c.failed()
		case <-ctx.Done():
			return fmt.Errorf("%s (pid %d) was not ready within %s; see %s", c.name, c.pid(), readyTimeout, c.log)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// freePorts asks the kernel for n free loopback ports.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: the harness binds and calls loopback only", addr)
	}
	return nil
}

func checkLoopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return checkLoopback(u.Host)
}

func decodeBody(contentType, text string) ([]byte, error) {
	if contentType == "application/json" {
		return []byte(text), nil
	}
	return hex.DecodeString(text)
}

// repeated is a flag that may be given many times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// runLoadProcess runs one load generator process and reads its result.
func runLoadProcess(ctx context.Context, self string, args []string) (loadResult, error) {
	cmd := exec.CommandContext(ctx, self, append([]string{"load"}, args...)...)
	cmd.WaitDelay = stopGrace
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return loadResult{}, fmt.Errorf("load generator: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res loadResult
	if err := json.NewDecoder(bufio.NewReader(strings.NewReader(string(out)))).Decode(&res); err != nil && !errors.Is(err, io.EOF) {
		return loadResult{}, fmt.Errorf("load generator's answer %q: %w", out, err)
	}
	return res, nil
}

// sampler is the OTEL_TRACES_SAMPLER setting that traces ratio of the
// calls: always_on for all of them, else a trace-id ratio.
func sampler(ratio float64) []string {
	if ratio >= 1 {
		return []string{"OTEL_TRACES_SAMPLER=always_on"}
	}
	return []string{"OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=" + strconv.FormatFloat(ratio, 'g', -1, 64)}
}
