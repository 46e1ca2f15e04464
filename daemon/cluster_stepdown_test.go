package garmd_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Issue 24: the leaders of the spent-grant bucket and of the ledger stream
// step down while grants are raced through every replica and other calls
// run. No grant is spent twice, a spend whose outcome the election hid is
// read back (refused as spent, or 503 if garmd cannot know in time, never
// paid twice), and every answered call's ledger row is in exactly one place.
func TestLeadersSteppingDownMidLoadSpendNoGrantTwiceAndLoseNoRow(t *testing.T) {
	p := startClusterPlane(t)
	payerToken := p.token("payer")
	spends, adds := newAnswers(), newAnswers()
	var (
		rounds, won, unknown atomic.Int32
		// unwon are the grants of rounds no replica won and none was told
		// 503 (every spend refused, as while the bucket had no leader);
		// each is tried again once the leaders are back: a grant whose
		// spend was never written must still pay, once.
		unwonMu sync.Mutex
		unwon   []string
		burned  atomic.Int32
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			g := p.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
			sent := time.Now()
			winners, unknownBefore := 0, unknown.Load()
			for _, ans := range p.spendRound(t, payerToken, g) {
				if ans == nil {
					continue
				}
				spends.add(sent, ans, nil)
				switch ans.status {
				case http.StatusOK:
					winners++
				case http.StatusServiceUnavailable:
					unknown.Add(1)
				case http.StatusForbidden:
				default:
					t.Errorf("a spend answered %d %s", ans.status, ans.body)
				}
			}
			if winners > 1 {
				t.Errorf("a grant was spent %d times", winners)
			}
			if winners == 0 && unknownBefore == unknown.Load() {
				unwonMu.Lock()
				unwon = append(unwon, g)
				unwonMu.Unlock()
			}
			rounds.Add(1)
			won.Add(int32(winners))
		}
	})
	for _, r := range p.replicas {
		p.load(&wg, stop, 1, r.url, addPath, p.token("public"), addBody, adds)
	}
	after := func(n int32) {
		target := rounds.Load() + n
		pollCluster(t, "grant rounds going on", func() bool { return rounds.Load() >= target })
	}
	after(10)
	bucketElection := p.stepDown(t, "KV_GARM_GRANTS_SPENT")
	after(10)
	ledgerElection := p.stepDown(t, "GARM_LEDGER")
	after(10)
	close(stop)
	wg.Wait()
	for _, g := range unwon {
		winners := 0
		for _, ans := range p.spendRound(t, payerToken, g) {
			if ans != nil {
				spends.add(time.Now(), ans, nil)
				if ans.status == http.StatusOK {
					winners++
				}
			}
		}
		if winners != 1 {
			burned.Add(1)
		}
		won.Add(int32(winners))
	}

	if paid := p.payments.paid.Load(); paid != uint32(won.Load()) {
		t.Fatalf("the tool paid %d times for %d winning spends", paid, won.Load())
	}
	adds.only(t, "to a tool without governance", http.StatusOK)
	p.stopReplicas()
	acc := p.accountFor(t, spends, adds)
	rows := map[string]string{}
	for _, e := range p.allLedgerRows() {
		rows[e.GetEventId()] = e.GetOutcome() + ": " + e.GetErrorDetail()
	}
	refused := 0
	for id, ans := range spends.byID {
		if ans.status != http.StatusForbidden {
			continue
		}
		refused++
		if row, ok := rows[id]; ok && !refusedAsSpent(ans, row) {
			t.Errorf("a losing spend was answered %d %s with row %q, want refused as spent", ans.status, ans.body, row)
		}
	}
	t.Logf("step-down: %d rounds, %d paid, %d refused, %d unavailable, %d rounds with no winner and no 503 (each paid once afterwards but %d); %d other calls; "+
		"the bucket had a new leader %s after its step-down, the ledger %s after its; "+
		"ledger: %d rows on the stream, %d in the log, %d lost, %d doubled",
		rounds.Load(), won.Load(), refused, unknown.Load(), len(unwon), burned.Load(), adds.total(),
		bucketElection.Round(time.Millisecond), ledgerElection.Round(time.Millisecond),
		acc.streamed, acc.logged, acc.lost, acc.doubled)
	// A spend refused because nothing could be written leaves its grant
	// usable, and one the server answers "wrong last sequence" after
	// applying it is read back and found to be the call's own (decision
	// 0034): no grant is spent without a payment.
	if n := burned.Load(); n != 0 {
		t.Errorf("%d of %d unwon grants could not pay afterwards: spent with no payment", n, len(unwon))
	}
}
