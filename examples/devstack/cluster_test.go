package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// make cluster (--cluster): the tour's stack on a three-node cluster with
// two garmd replicas behind the round-robin front. A call through the
// front succeeds; node 2 is stopped and started again through the dev
// endpoint, as the quick-start says, and calls through the front succeed
// again, answered by both replicas in turn.
func TestTheClusterServesThroughItsFrontAndAgainAfterANodeRestarts(t *testing.T) {
	o := testOptions(t)
	o.Nodes, o.Replicas = ClusterNodes, ClusterReplicas
	s := startStack(t, o)
	urls := s.URLs()
	if len(urls.Nodes) != ClusterNodes || len(urls.Replicas) != ClusterReplicas {
		t.Fatalf("the stack runs %d nodes and %d replicas, want %d and %d", len(urls.Nodes), len(urls.Replicas), ClusterNodes, ClusterReplicas)
	}
	for _, want := range []string{urls.Dev + "/nodes/2/stop", urls.Dev + "/nodes/2/start", urls.Replicas[1]} {
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

	for _, action := range []string{"stop", "start"} {
		devPost(t, urls, "/nodes/2/"+action)
	}
	// While the replica whose node restarted reconnects, and JetStream
	// elects leaders again, a call may be refused 503; the plane serves
	// again within the bound. Two successes in a row are both replicas.
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
			t.Fatalf("a call through the front after node 2 restarted: %d %s", a.status, a.body)
		}
	}
}
