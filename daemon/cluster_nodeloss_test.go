package garmd_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 24: the node one replica is connected to stops under load. Calls
// through that replica fail 503 (those in flight end at their deadline)
// until it has reconnected to another node, and then succeed again with
// no restart; the other replicas are not disturbed. Every answered call's
// ledger row is on the stream exactly once or in the log exactly once.
func TestLosingTheNodeAReplicaIsConnectedToUnderLoadLosesNoCallsRow(t *testing.T) {
	p := startClusterPlane(t, withToolTimeout(2*time.Second))
	token := p.token("public")
	through := make([]*answers, len(p.replicas))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range p.replicas {
		through[i] = newAnswers()
		p.load(&wg, stop, 2, r.url, addPath, token, addBody, through[i])
	}
	eventually(t, "calls succeeding through every replica", func() bool {
		for _, a := range through {
			if a.count(http.StatusOK) < 10 {
				return false
			}
		}
		return true
	})
	if n := p.replicas[1].reconnects(t); n != 0 {
		t.Fatalf("the replica had reconnected %d times before its node stopped", n)
	}
	stopped := time.Now()
	p.cluster.Nodes[1].Stop()
	// It reconnects, to another node, by itself.
	pollCluster(t, "the replica reconnecting", func() bool { return p.replicas[1].reconnects(t) == 1 })
	reconnected := time.Since(stopped)
	pollCluster(t, "calls through the replica that lost its node succeeding again", func() bool { return through[1].okSentAfter(stopped) >= 20 })
	recovery, _ := through[1].firstOKSentAfter(stopped)
	if err := p.cluster.Nodes[1].Start(); err != nil {
		t.Fatal(err)
	}
	p.cluster.WaitForMetaLeader()
	for _, a := range through[1:] {
		restarted := time.Now()
		pollCluster(t, "calls succeeding after the node came back", func() bool { return a.okSentAfter(restarted) >= 5 })
	}
	close(stop)
	wg.Wait()

	through[1].only(t, "through the replica that lost its node", http.StatusOK, http.StatusServiceUnavailable, http.StatusGatewayTimeout)
	for _, a := range []*answers{through[0], through[2]} {
		a.only(t, "through a replica whose node stayed", http.StatusOK)
	}
	p.stopReplicas()
	acc := p.accountFor(t, through...)
	calls := 0
	for _, a := range through {
		calls += a.total()
	}
	t.Logf("node loss: %d calls (through the replica that lost its node: %v); reconnected within %s, first success sent %s after the stop; "+
		"ledger: %d rows on the stream, %d in the log, %d lost, %d doubled",
		calls, through[1].statuses(), reconnected.Round(time.Millisecond), recovery.Round(time.Millisecond), acc.streamed, acc.logged, acc.lost, acc.doubled)
}

// pollCluster polls cond, bounded by clusterWait: elections take seconds.
func pollCluster(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %s", what, clusterWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 24: with two of three nodes down no stream has a quorum. A tool
// whose audit is fail-closed answers 503 and is never reached; the other
// tools keep serving, their ledger rows wait for the stream (or fall back
// to the log), and once the nodes are back nothing is lost.
func TestWithoutQuorumAFailClosedAuditToolAnswers503AndNoRowIsLost(t *testing.T) {
	p := startClusterPlane(t, withToolTimeout(2*time.Second))
	survivor := p.replicas[0].url
	payerToken := p.token("payer")
	exports, adds := newAnswers(), newAnswers()
	export := func() *answer {
		t.Helper()
		sent := time.Now()
		ans, err := p.postTo(survivor, exportPath, payerToken, `{}`, "Garm-Timeout-Ms", "750")
		exports.add(sent, ans, err)
		if err != nil {
			t.Fatal(err)
		}
		return ans
	}
	if ans := export(); ans.status != http.StatusOK {
		t.Fatalf("an export with every node up: %d %s", ans.status, ans.body)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	p.load(&wg, stop, 1, survivor, addPath, p.token("public"), addBody, adds)

	p.cluster.Nodes[1].Stop()
	p.cluster.Nodes[2].Stop()
	served := p.payments.exported.Load()
	const refusals = 3
	for range refusals {
		if ans := export(); ans.status != http.StatusServiceUnavailable || !strings.Contains(string(ans.body), `"code":"unavailable"`) {
			t.Fatalf("an export without quorum: %d %s", ans.status, ans.body)
		}
	}
	if n := p.payments.exported.Load(); n != served {
		t.Fatalf("the fail-closed tool was reached %d times without its audit record", n-served)
	}
	okDuringOutage := adds.count(http.StatusOK)

	restarted := time.Now()
	for _, n := range p.cluster.Nodes[1:] {
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
	}
	pollCluster(t, "an export succeeding once quorum is back", func() bool {
		if export().status == http.StatusOK {
			return true
		}
		time.Sleep(100 * time.Millisecond)
		return false
	})
	recovery := time.Since(restarted)
	close(stop)
	wg.Wait()

	// The calculator's node stopped too: while it reconnects calls are told
	// it is unavailable, and one in its hands then ends at its deadline.
	adds.only(t, "to a tool without audit", http.StatusOK, http.StatusServiceUnavailable, http.StatusGatewayTimeout)
	exports.only(t, "to the fail-closed tool", http.StatusOK, http.StatusServiceUnavailable)
	p.stopReplicas()
	acc := p.accountFor(t, exports, adds)
	// Every export that ran has its intent and outcome on the audit stream.
	// A refused one's outcome is written only within its deadline, so
	// without quorum its ledger row (audit_unavailable) is its record.
	audited, outcomes := 0, map[string]bool{}
	for _, row := range p.streamRows("GARM_AUDIT") {
		if _, ok := exports.byID[row.event.GetEventId()]; ok {
			audited++
			if !strings.HasSuffix(row.msgID, ".intent") {
				outcomes[row.event.GetEventId()] = true
			}
		}
	}
	refusedAudited := 0
	for id, ans := range exports.byID {
		if ans.status != http.StatusOK {
			if outcomes[id] {
				refusedAudited++
			}
			continue
		}
		if !outcomes[id] {
			t.Errorf("the export answered %d (%s) has no audit outcome", ans.status, id)
		}
	}
	t.Logf("no quorum: %d exports (%v), %d other calls (%d ok while the nodes were down or before); "+
		"quorum back and the fail-closed tool serving %s after the restart; "+
		"ledger: %d rows on the stream, %d in the log, %d lost, %d doubled; %d audit rows of the exports (outcomes of %d refused ones)",
		exports.total(), exports.statuses(), adds.total(), okDuringOutage, recovery.Round(time.Millisecond),
		acc.streamed, acc.logged, acc.lost, acc.doubled, audited, refusedAudited)
}
