package garmd_test

import (
	"net/http"
	"testing"
	"time"
)

// Issue 24: three replicas on three nodes race to spend each of 100 fresh
// grants. The spent-grant bucket is R3 and fenced; every spend is a
// create-only write that the bucket's leader orders, so exactly one
// replica wins each round and the others are refused as spent.
func TestAGrantRacedThroughThreeReplicasOnThreeNodesIsSpentExactlyOnce(t *testing.T) {
	p := startClusterPlane(t)
	token := p.token("payer")
	const rounds = 100
	began := time.Now()
	var losers []*answer
	for round := range rounds {
		g := p.grant("approver", "appr.v1.pay", payer, paymentMaterial, "")
		won := 0
		for i, ans := range p.spendRound(t, token, g) {
			switch {
			case ans == nil:
			case ans.status == http.StatusOK:
				won++
			case ans.status == http.StatusForbidden:
				losers = append(losers, ans)
			default:
				t.Errorf("round %d: replica %d answered %d %s", round, i, ans.status, ans.body)
			}
		}
		if won != 1 {
			t.Fatalf("round %d had %d winners, want exactly 1", round, won)
		}
	}
	raced := time.Since(began)
	if n := p.payments.paid.Load(); n != rounds {
		t.Fatalf("the tool paid %d times in %d rounds", n, rounds)
	}
	// Every loser's row says the grant was spent: refused as spent, never
	// as a bucket error.
	p.stopReplicas()
	rows := map[string]string{}
	for _, e := range p.allLedgerRows() {
		rows[e.GetEventId()] = e.GetOutcome() + ": " + e.GetErrorDetail()
	}
	for _, ans := range losers {
		if !refusedAsSpent(ans, rows[ans.eventID()]) {
			t.Errorf("a loser was answered %d %s with row %q, want refused as spent", ans.status, ans.body, rows[ans.eventID()])
		}
	}
	if want := rounds * (len(p.replicas) - 1); len(losers) != want {
		t.Errorf("%d losers, want %d", len(losers), want)
	}
	t.Logf("%d rounds through %d replicas in %s: %d winners, %d refused as spent, %d ledger rows",
		rounds, len(p.replicas), raced.Round(time.Millisecond), p.payments.paid.Load(), len(losers), len(rows))
}
