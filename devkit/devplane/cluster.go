package devplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/garm-dev/garm/internal/loopback"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterName names the dev cluster's NATS cluster.
const clusterName = "garm-dev"

// startClusterBus starts n embedded servers on loopback as one NATS
// cluster with JetStream: the first on addr, the others on free ports of
// its host, each with its own store under storeDir and its own cluster
// port. Every port is fixed once chosen, so a node stopped and started
// again (StopNode, StartNode) rejoins where it was. With bin set, each node
// is a process of that nats-server binary, its configuration file and log
// in dir.
func startClusterBus(addr, storeDir string, n int, users []*server.NkeyUser, bin, dir string) (*bus, error) {
	host, first, err := listenPort(addr)
	if err != nil {
		return nil, err
	}
	// Every port in one call, so that no two are the same.
	ports, err := freePorts(host, 3*n)
	if err != nil {
		return nil, err
	}
	clientPorts, clusterPorts, monitorPorts := ports[:n], ports[n:2*n], ports[2*n:]
	if first != server.RANDOM_PORT {
		clientPorts[0] = first
	}
	routes := make([]string, n)
	for i := range n {
		routes[i] = "nats://" + net.JoinHostPort(host, fmt.Sprint(clusterPorts[i]))
	}
	b := &bus{}
	for i := range n {
		name := fmt.Sprintf("%s-%d", clusterName, i+1)
		b.nodes = append(b.nodes, &node{name: name, bin: bin, dir: dir, opts: &server.Options{
			ServerName: name,
			Host:       host,
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   filepath.Join(storeDir, name),
			NoLog:      true,
			NoSigs:     true,
			Nkeys:      users,
			Cluster:    server.ClusterOpts{Name: clusterName, Host: host, Port: clusterPorts[i]},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}})
		if bin != "" {
			b.nodes[i].opts.HTTPHost, b.nodes[i].opts.HTTPPort = host, monitorPorts[i]
		}
	}
	for i, nd := range b.nodes {
		nd.url = "nats://" + net.JoinHostPort(host, fmt.Sprint(clientPorts[i]))
		if err := nd.start(); err != nil {
			b.close()
			return nil, err
		}
	}
	b.url = b.seedsFrom(0)
	return b, nil
}

// freePorts picks n free ports on host. Another process could take one
// before the server binds it; the server then fails to start and says so.
func freePorts(host string, n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitForJetStream polls until JetStream answers: a cluster elects its
// meta leader in the first seconds.
func waitForJetStream(ctx context.Context, js jetstream.JetStream) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(attempt)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream did not answer within %s: %w", readyTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// StopNode stops the cluster's node i (1-based), as a node failing would:
// its clients reconnect to the others, and JetStream elects new leaders.
func (s *Plane) StopNode(i int) error {
	nd, err := s.node(i)
	if err != nil {
		return err
	}
	return nd.stop()
}

// StartNode starts node i (1-based) again on its ports and store; it
// rejoins the cluster and catches up. A node process is waited for until
// its monitoring endpoint says it has.
func (s *Plane) StartNode(i int) error {
	nd, err := s.node(i)
	if err != nil {
		return err
	}
	if pid := nd.pid(); pid != 0 {
		return fmt.Errorf("node %d runs (pid %d)", i, pid)
	}
	if err := nd.start(); err != nil {
		return err
	}
	return nd.waitHealthy(context.Background())
}

func (s *Plane) node(i int) (*node, error) {
	if i < 1 || i > len(s.bus.nodes) {
		return nil, fmt.Errorf("no node %d: the bus has %d", i, len(s.bus.nodes))
	}
	return s.bus.nodes[i-1], nil
}

// serveNode is POST /nodes/{n}/stop and /nodes/{n}/start on the dev
// endpoint.
func (s *Plane) serveNode(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscan(r.PathValue("n"), &i); err != nil {
		http.Error(w, "no such node", http.StatusNotFound)
		return
	}
	var err error
	switch r.PathValue("action") {
	case "stop":
		err = s.StopNode(i)
	case "start":
		err = s.StartNode(i)
	default:
		http.Error(w, "the action is stop or start", http.StatusNotFound)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	fmt.Fprintf(w, "node %d: %s", i, map[string]string{"stop": "stopped", "start": "started"}[r.PathValue("action")])
	if pid := s.bus.nodes[i-1].pid(); pid != 0 {
		fmt.Fprintf(w, " (pid %d)", pid)
	}
	fmt.Fprintln(w)
}

// front is the round-robin reverse proxy before the garmd replicas: each
// request goes to the next replica in turn.
type front struct {
	srv  *http.Server
	next atomic.Uint64
}

// startFront listens on addr and sends each request to the next of
// replicas in turn, the Host header kept as the caller sent it. A replica
// whose process has exited (serving answers false) is skipped, while
// another serves.
func startFront(addr string, replicas []*url.URL, serving func(int) bool, fail func(error)) (*front, string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--listen: %w", err)
	}
	f := &front{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			i := int(f.next.Add(1) % uint64(len(replicas)))
			for range len(replicas) {
				if serving(i) {
					break
				}
				i = (i + 1) % len(replicas)
			}
			r.SetURL(replicas[i])
			r.Out.Host = r.In.Host
		},
		// A response is streamed as garmd writes it (MCP's event streams).
		FlushInterval: -1,
	}
	f.srv = &http.Server{Handler: loopback.Guard(proxy), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := f.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fail(fmt.Errorf("the round-robin front stopped: %v", err))
		}
	}()
	return f, "http://" + l.Addr().String(), nil
}

// clusterQuickStartText is what a cluster's quick-start adds: where each
// node and replica answers, and the commands that stop and start a node.
var clusterQuickStartText = template.Must(template.New("cluster").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Parse(`
This plane is a cluster on loopback: {{len .Nodes}} NATS nodes with JetStream (every stream and the
spent-grant bucket R{{.R}}) and {{len .Replicas}} garmd replicas behind a round-robin front at {{.Garmd}}.
{{- if .NodePIDs}}
The nodes{{if .ReplicaPIDs}} and the replicas{{end}} are processes of their own, each logging to
{{.Logs}}/<name>.log; the front, the tool services and the identity provider run in this one.
{{- else}} The nodes are embedded servers in this one process, so they are stopped and started
through the dev endpoint rather than with kill.{{end}}
{{range $i, $n := .Nodes}}
  node {{inc $i}}    {{$n}}{{if $.NodePIDs}}   pid {{index $.NodePIDs $i}}{{end}}{{end}}
{{range $i, $r := .Replicas}}
  replica {{inc $i}} {{$r}}   admin {{index $.ReplicaAdmins $i}}/readyz /metrics{{if $.ReplicaPIDs}}   pid {{index $.ReplicaPIDs $i}}{{end}}{{end}}

Replica n connects first to node n; the tool services are spread over the nodes in turn.

# The dev endpoint answers only with this run's secret:
DEV_SECRET=$(cat {{.DevSecretFile}})
{{if .NodePIDs}}
# Kill node 2, watch the plane keep serving (the calls above still answer) and replica 2
# reconnect to another node, then start node 2 again (on its ports and store):
kill -9 {{index .NodePIDs 1}}
curl -s {{.Watched}}/metrics | grep -E '^garm_bus_(connected|reconnects_total)'
curl -s {{.Watched}}/readyz
curl -s -X POST -H "{{.SecretHeader}}: $DEV_SECRET" {{.Dev}}/nodes/2/start
{{- if .ReplicaPIDs}}

# Kill replica 2: the front sends every call to replica 1 while it is gone. Then start it
# again on its addresses:
kill -9 {{index .ReplicaPIDs 1}}
curl -s -X POST -H "{{.SecretHeader}}: $DEV_SECRET" {{.Dev}}/replicas/2/start
{{- end}}
# (POST {{.Dev}}/nodes/2/stop stops node 2 gracefully instead of kill.)
{{else}}
# Stop node 2, watch the plane keep serving (the calls above still answer) and replica 2
# reconnect to another node, then start node 2 again:
curl -s -X POST -H "{{.SecretHeader}}: $DEV_SECRET" {{.Dev}}/nodes/2/stop
curl -s {{.Watched}}/metrics | grep -E '^garm_bus_(connected|reconnects_total)'
curl -s {{.Watched}}/readyz
curl -s -X POST -H "{{.SecretHeader}}: $DEV_SECRET" {{.Dev}}/nodes/2/start
{{end}}`))

// ClusterQuickStart is what a quick-start adds when the plane is a
// cluster or has several replicas: "" otherwise.
func ClusterQuickStart(urls URLs) (string, error) {
	if len(urls.Nodes) < 2 && len(urls.Replicas) < 2 {
		return "", nil
	}
	var out strings.Builder
	// The replica connected first to node 2, when there is one.
	watched := urls.ReplicaAdmins[min(1, len(urls.ReplicaAdmins)-1)]
	err := clusterQuickStartText.Execute(&out, struct {
		URLs
		R            int
		Watched      string
		SecretHeader string
	}{urls, min(len(urls.Nodes), 3), watched, DevSecretHeader})
	return out.String(), err
}

// NodePID is the process id of node i (1-based) when the nodes run as
// processes and it runs: 0 otherwise.
func (s *Plane) NodePID(i int) int {
	nd, err := s.node(i)
	if err != nil {
		return 0
	}
	return nd.pid()
}
