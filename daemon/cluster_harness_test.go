package garmd_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterPlane is a governed plane on a real three-node cluster: every
// stream and the fenced bucket R3, the tool services spread over the
// nodes, and one garmd replica per node, each connected first to its own
// node (the cluster tells it the others, for reconnecting). Every replica
// logs to the stack's one log, so the fallback ledger of all of them is
// read in one place.
type clusterPlane struct {
	*stack
	cluster *garmtooltest.Cluster
	nc      *nats.Conn
	js      jetstream.JetStream
	// replicas[i] is connected first to cluster.Nodes[i]; replicas[0] is
	// the stack's own garmd.
	replicas []*replica
}

// startClusterPlane starts a cluster plane for the test.
//
// The tests on a cluster do not call t.Parallel, unlike most of this
// package's: each runs three nodes, three replicas and a load on CI's two
// cores, and the elections and reconnects they wait for were bounded for a
// cluster with the machine to itself (decision 0145).
func startClusterPlane(t *testing.T, opts ...stackOption) *clusterPlane {
	t.Helper()
	cluster := garmtooltest.StartCluster(t, "garm", 3)
	nc, js := garmtooltest.ConnectJetStream(t, cluster.URLs())
	createR3Streams(t, js)
	// The test's own readers of the streams connect to the first node,
	// which no test stops.
	b := &bus{url: cluster.Nodes[0].URL()}
	for _, n := range cluster.Nodes {
		b.nodes = append(b.nodes, n.URL())
	}
	opts = append(opts, func(c *garmd.Config) { c.MinReplicas = 3 })
	s := newStackOn(t, b, true, opts...)
	p := &clusterPlane{stack: s, cluster: cluster, nc: nc, js: js}
	p.replicas = append(p.replicas, &replica{url: s.url, adminURL: s.adminURL, stop: s.shutdown})
	for _, n := range cluster.Nodes[1:] {
		p.replicas = append(p.replicas, s.startReplicaOn(n.URL()))
	}
	return p
}

// stopReplicas stops every replica, each flushing its ledger.
func (p *clusterPlane) stopReplicas() {
	for _, r := range p.replicas {
		r.stop()
	}
}

// answers collects the answers of calls made concurrently, by event id.
type answers struct {
	mu       sync.Mutex
	byID     map[string]*answer
	sent     map[string]time.Time
	noID     int
	failures []error
}

func newAnswers() *answers { return &answers{byID: map[string]*answer{}, sent: map[string]time.Time{}} }

// add records the answer to a call sent at sent.
func (a *answers) add(sent time.Time, ans *answer, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		a.failures = append(a.failures, err)
	case ans.eventID() == "":
		a.noID++
	default:
		a.byID[ans.eventID()] = ans
		a.sent[ans.eventID()] = sent
	}
}

// firstOKSentAfter is how long after t the first call answered 200 was
// sent, and whether there is one.
func (a *answers) firstOKSentAfter(t time.Time) (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	first, found := time.Duration(0), false
	for id, ans := range a.byID {
		if d := a.sent[id].Sub(t); ans.status == http.StatusOK && d >= 0 && (!found || d < first) {
			first, found = d, true
		}
	}
	return first, found
}

// okSentAfter counts the calls sent after t and answered 200.
func (a *answers) okSentAfter(t time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for id, ans := range a.byID {
		if ans.status == http.StatusOK && !a.sent[id].Before(t) {
			n++
		}
	}
	return n
}

// statuses is how many answers had each status, for the test's log.
func (a *answers) statuses() map[int]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[int]int{}
	for _, ans := range a.byID {
		out[ans.status]++
	}
	return out
}

// only fails the test for a transport failure or a status not in allowed.
func (a *answers) only(t *testing.T, what string, allowed ...int) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, err := range a.failures {
		t.Errorf("a call %s failed in transport: %v", what, err)
	}
	for _, ans := range a.byID {
		if !slices.Contains(allowed, ans.status) {
			t.Errorf("a call %s answered %d %s", what, ans.status, ans.body)
		}
	}
}

// count is how many answers had status.
func (a *answers) count(status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, ans := range a.byID {
		if ans.status == status {
			n++
		}
	}
	return n
}

func (a *answers) total() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byID)
}

// accounting is where each answered call's ledger row is, once every
// replica has stopped and flushed.
type accounting struct {
	streamed, logged, lost, doubled int
}

// accountFor checks the ledger invariant over every answered call: its
// event id is on GARM_LEDGER exactly once or in the fallback log exactly
// once, never both, and neither holds a row of a call never answered. The
// replicas must have stopped. A row twice on the stream fails inside
// readLedger, a row twice in the log inside logRows.
func (p *clusterPlane) accountFor(t *testing.T, all ...*answers) accounting {
	t.Helper()
	p.cluster.WaitForMetaLeader()
	pollCluster(t, "GARM_LEDGER having a leader and every replica current", func() bool { return p.streamCurrent(t, "GARM_LEDGER") })
	// Just after an election the JetStream API may not answer a consumer's
	// creation yet; the ledger is read once it does.
	pollCluster(t, "GARM_LEDGER taking a consumer", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c, err := p.js.OrderedConsumer(ctx, "GARM_LEDGER", jetstream.OrderedConsumerConfig{})
		if err != nil {
			return false
		}
		_, err = c.Fetch(1, jetstream.FetchMaxWait(250*time.Millisecond))
		return err == nil
	})
	streamed := map[string]bool{}
	for _, e := range p.allLedgerRows() {
		streamed[e.GetEventId()] = true
	}
	logged := p.logRows()
	var acc accounting
	answered := map[string]bool{}
	for _, a := range all {
		if a.noID > 0 {
			t.Errorf("%d answers carried no Garm-Event-Id", a.noID)
		}
		for id := range a.byID {
			answered[id] = true
			switch inStream, inLog := streamed[id], logged[id] != nil; {
			case inStream && inLog:
				acc.doubled++
				t.Errorf("call %s has two ledger rows: one on the stream and one in the log (%v)", id, logged[id])
			case inStream:
				acc.streamed++
			case inLog:
				acc.logged++
			default:
				acc.lost++
				t.Errorf("call %s has no ledger row", id)
			}
		}
	}
	for id := range logged {
		if !answered[id] {
			t.Errorf("the log holds a row of %s, which no call was answered", id)
		}
	}
	return acc
}

// load calls path through base from workers goroutines until stop is
// closed; each call's answer goes to into. After a transport failure a
// worker waits a moment before it calls again.
func (p *clusterPlane) load(wg *sync.WaitGroup, stop <-chan struct{}, workers int, base, path, token, body string, into *answers) {
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				sent := time.Now()
				ans, err := p.postTo(base, path, token, body)
				into.add(sent, ans, err)
				if err != nil {
					// A replica that stopped refuses at once; do not spin.
					select {
					case <-stop:
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		})
	}
}

// streamLeader is the server leading stream, "" while it has none.
func (p *clusterPlane) streamLeader(t *testing.T, stream string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := p.js.Stream(ctx, stream)
	if err != nil {
		return ""
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		return ""
	}
	return info.Cluster.Leader
}

// streamCurrent says whether stream has a leader and every one of its
// replicas is current.
func (p *clusterPlane) streamCurrent(t *testing.T, stream string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := p.js.Stream(ctx, stream)
	if err != nil {
		return false
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
		return false
	}
	for _, r := range info.Cluster.Replicas {
		if !r.Current || r.Offline {
			return false
		}
	}
	return true
}

// stepDown asks stream's leader to step down through the JetStream API and
// waits, bounded, for another node to lead it; it returns how long the
// stream was without its old leader.
func (p *clusterPlane) stepDown(t *testing.T, stream string) time.Duration {
	t.Helper()
	old := p.streamLeader(t, stream)
	if old == "" {
		t.Fatalf("%s has no leader to step down", stream)
	}
	began := time.Now()
	msg, err := p.nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, 5*time.Second)
	if err != nil {
		t.Fatalf("stepping down %s's leader: %v", stream, err)
	}
	var reply struct {
		Success bool `json:"success"`
		Error   *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil || !reply.Success {
		t.Fatalf("stepping down %s's leader: %s", stream, msg.Data)
	}
	deadline := time.Now().Add(clusterWait)
	for {
		if now := p.streamLeader(t, stream); now != "" && now != old {
			return time.Since(began)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s had no new leader within %s of its leader %s stepping down", stream, clusterWait, old)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reconnects is the replica's garm_bus_reconnects_total, -1 while its
// metrics cannot be read.
func (r *replica) reconnects(t *testing.T) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(r.adminURL + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "garm_bus_reconnects_total "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// refusedAsSpent says whether ans is the refusal of a spent grant: the
// caller is told only "permission denied", the row says why.
func refusedAsSpent(ans *answer, row string) bool {
	return ans.status == http.StatusForbidden && string(ans.body) == permissionDeniedBody && strings.Contains(row, "spent")
}

// spendRound sends one grant concurrently through every replica and
// returns each replica's answer, nil where the transport failed.
func (p *clusterPlane) spendRound(t *testing.T, token, grant string) []*answer {
	out := make([]*answer, len(p.replicas))
	var wg sync.WaitGroup
	for i, r := range p.replicas {
		wg.Go(func() {
			ans, err := p.postTo(r.url, payPath, token, payment, "Garm-Grant", grant)
			if err != nil {
				t.Errorf("a spend through replica %d: %v", i, err)
				return
			}
			out[i] = ans
		})
	}
	wg.Wait()
	return out
}
