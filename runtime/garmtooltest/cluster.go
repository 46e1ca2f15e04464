package garmtooltest

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// formTimeout bounds the wait for a cluster, or a node, to be ready.
const formTimeout = 30 * time.Second

// Cluster is a real NATS cluster with JetStream in the test process: nodes
// on loopback, each with its own client port, route port and store
// directory, routed to one another. A test stops and starts nodes to lose
// and regain quorum.
type Cluster struct {
	t     testing.TB
	Nodes []*Node
}

// Node is one server of a Cluster. Stopping and starting it keeps its
// ports and store, as a restarted server would.
type Node struct {
	name       string
	opts       *server.Options
	srv        *server.Server
	clientPort int
}

// StartCluster runs a cluster of n nodes named name-1…name-n until the
// test ends, and returns once it has a JetStream meta leader: formation
// takes seconds, so it is waited for with a bounded poll.
func StartCluster(t testing.TB, name string, n int) *Cluster {
	t.Helper()
	clientPorts, clusterPorts := freePorts(t, n), freePorts(t, n)
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", clusterPorts[i])
	}
	c := &Cluster{t: t}
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("%s-%d", name, i+1),
			Host:       "127.0.0.1",
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   filepath.Join(t.TempDir(), "js"),
			NoLog:      true,
			NoSigs:     true,
			Cluster: server.ClusterOpts{
				Name: name,
				Host: "127.0.0.1",
				Port: clusterPorts[i],
			},
			Routes: server.RoutesFromStr(strings.Join(routes, ",")),
		}
		c.Nodes = append(c.Nodes, &Node{name: o.ServerName, opts: o, clientPort: clientPorts[i]})
	}
	for _, node := range c.Nodes {
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.Stop)
	c.WaitForMetaLeader()
	return c
}

// Start starts the node again, on its ports and store.
func (n *Node) Start() error {
	if n.srv != nil {
		return nil
	}
	srv, err := server.NewServer(n.opts.Clone())
	if err != nil {
		return fmt.Errorf("garmtooltest: node %s: %w", n.name, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(formTimeout) {
		srv.Shutdown()
		return fmt.Errorf("garmtooltest: node %s did not take connections within %s", n.name, formTimeout)
	}
	n.srv = srv
	return nil
}

// Stop shuts the node down and waits until it has.
func (n *Node) Stop() {
	if n.srv == nil {
		return
	}
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
}

// URL is the node's client URL.
func (n *Node) URL() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.clientPort) }

// Name is the node's server name.
func (n *Node) Name() string { return n.name }

// Server is the running server, nil while stopped.
func (n *Node) Server() *server.Server { return n.srv }

// URLs is every node's client URL, comma-separated: a seed list.
func (c *Cluster) URLs() string {
	urls := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		urls[i] = n.URL()
	}
	return strings.Join(urls, ",")
}

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// WaitForMetaLeader polls, bounded, until a running node is the JetStream
// meta leader, every running node sees JetStream current, and the leader
// counts every running node as an online peer. Without the last, a stream
// created at once may be refused "no suitable peers for placement": the
// leader places replicas only on peers whose statistics it has received.
func (c *Cluster) WaitForMetaLeader() {
	c.t.Helper()
	deadline := time.Now().Add(formTimeout)
	for {
		if c.metaLeader() {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("garmtooltest: no JetStream meta leader seeing every running node within %s", formTimeout)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (c *Cluster) metaLeader() bool {
	running, online := 0, -1
	for _, n := range c.Nodes {
		if n.srv == nil {
			continue
		}
		running++
		if !n.srv.JetStreamIsCurrent() {
			return false
		}
		if n.srv.JetStreamIsLeader() {
			online = len(n.srv.JetStreamClusterPeers())
		}
	}
	return running > 0 && online >= running
}

// freePorts are n loopback TCP ports free when asked.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	listeners := make([]net.Listener, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners[i], ports[i] = l, l.Addr().(*net.TCPAddr).Port
	}
	for _, l := range listeners {
		l.Close()
	}
	return ports
}
