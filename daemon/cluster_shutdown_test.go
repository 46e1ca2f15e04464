package garmd_test

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// stallBody asks the Stall tool to hold each call long enough that calls
// are in its hands whenever a replica begins to stop.
const stallBody = `{"ms": 200}`

// Issue 24: one replica is told to stop while calls are in flight through
// every replica. Every call it took is answered — none is cut before its
// deadline — and every call it did not take fails before garmd read it;
// the other replicas keep serving throughout. The ledger is the oracle for
// "took": a call garmd read always has a row, so a row of a call never
// answered would be a call cut. Accounting is exact.
func TestStoppingOneReplicaUnderLoadCutsNoCallAndTheOthersKeepServing(t *testing.T) {
	p := startClusterPlane(t, withToolTimeout(2*time.Second))
	token := p.token("public")
	through := make([]*answers, len(p.replicas))
	// The stopping replica's callers stop calling once it has exited.
	stop, stopCallingIt := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range p.replicas {
		through[i] = newAnswers()
		until := stop
		if i == 1 {
			until = stopCallingIt
		}
		p.load(&wg, until, 3, r.url, stallPath, token, stallBody, through[i])
	}
	eventually(t, "calls succeeding through every replica", func() bool {
		for _, a := range through {
			if a.count(http.StatusOK) < 10 {
				return false
			}
		}
		return true
	})

	stopping := p.replicas[1]
	began := time.Now()
	stopping.stop()
	exited := time.Since(began)
	close(stopCallingIt)
	stopped := time.Now()
	for _, i := range []int{0, 2} {
		pollCluster(t, "calls succeeding through the other replicas after the stop", func() bool { return through[i].okSentAfter(stopped) >= 10 })
	}
	close(stop)
	wg.Wait()

	// Calls sent to the stopping replica once it closed its listener fail
	// in transport before garmd reads them: they are not its calls, and the
	// ledger below proves it holds no row of any. Every call it took
	// answered 200.
	inFlight := through[1].okSentBefore(began, began)
	notTaken := through[1].dropFailures()
	through[1].only(t, "through the replica that stopped", http.StatusOK)
	if inFlight == 0 {
		t.Error("no call was in flight through the replica when it began to stop; the scenario proved nothing")
	}
	for _, i := range []int{0, 2} {
		through[i].only(t, "through a replica that kept serving", http.StatusOK)
	}
	p.stopReplicas()
	acc := p.accountFor(t, through...)
	if n := p.streamedRowsNotAnswered(t, through...); n > 0 {
		t.Errorf("%d rows on the stream belong to calls never answered: calls garmd took and cut", n)
	}
	calls := 0
	for _, a := range through {
		calls += a.total()
	}
	t.Logf("shutdown of one replica: %d calls answered (%d through the stopping replica, %d of them in flight as it began to stop); "+
		"%d calls not taken (failed in transport, no row); the replica exited in %s; "+
		"ledger: %d rows on the stream, %d in the log, %d lost, %d doubled",
		calls, through[1].total(), inFlight, notTaken, exited.Round(time.Millisecond), acc.streamed, acc.logged, acc.lost, acc.doubled)
}

// okSentBefore counts the calls sent before t, answered 200 and whose
// answer came at or after from: calls in flight at from.
func (a *answers) okSentBefore(t, from time.Time) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for id, ans := range a.byID {
		if ans.status == http.StatusOK && a.sent[id].Before(t) && !ans.received.Before(from) {
			n++
		}
	}
	return n
}

// dropFailures forgets the transport failures and returns how many there
// were.
func (a *answers) dropFailures() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.failures)
	a.failures = nil
	return n
}

// streamedRowsNotAnswered counts the rows on GARM_LEDGER whose call no
// caller got an answer to. Call it after accountFor, once the stream is
// current.
func (p *clusterPlane) streamedRowsNotAnswered(t *testing.T, all ...*answers) int {
	t.Helper()
	n := 0
	for _, e := range p.allLedgerRows() {
		answered := false
		for _, a := range all {
			a.mu.Lock()
			_, answered = a.byID[e.GetEventId()]
			a.mu.Unlock()
			if answered {
				break
			}
		}
		if !answered {
			t.Errorf("the stream holds a row of %s (%s, %s), which no call was answered", e.GetEventId(), e.GetTool(), e.GetOutcome())
			n++
		}
	}
	return n
}
