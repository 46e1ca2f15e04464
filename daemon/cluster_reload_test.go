package garmd_test

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// Issue 24: a catalogue change is published to the S3 store every replica
// polls, while calls flow through every replica. Every call is answered
// 200 by exactly one generation — its answer's digest is its ledger row's
// — no replica ever answers from a generation older than one it already
// answered from, and every replica comes to serve each new generation.
// How long each took after the publish is logged beside the poll interval:
// a figure (an upper bound, the replicas being probed in turn), not a timed
// assertion.
func TestAReloadAcrossReplicasAnswersEveryCallFromOneGenerationAndTheReplicasConverge(t *testing.T) {
	store := startCatalogueStore(t)
	p := startClusterPlane(t, withS3Catalogue(store, governedCatalogue, shortPoll))
	base := must(t, governedCatalogue)
	token := p.token("public")
	first, err := p.postTo(p.replicas[0].url, addPath, token, addBody)
	if err != nil || first.status != http.StatusOK {
		t.Fatalf("a first call: %v %v", first, err)
	}
	order := []string{first.header.Get("Garm-Catalogue-Digest")}

	through := make([]*answers, len(p.replicas))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range p.replicas {
		through[i] = newAnswers()
		p.load(&wg, stop, 2, r.url, addPath, token, addBody, through[i])
	}
	probes := newAnswers()
	var converged [][]time.Duration
	for _, name := range []string{"reload-one", "reload-two", "reload-three"} {
		published := time.Now()
		digest := store.publish(variant(t, base, name))
		order = append(order, digest)
		var took []time.Duration
		for _, r := range p.replicas {
			eventually(t, "replica "+r.url+" serving "+digest, func() bool {
				sent := time.Now()
				ans, err := p.postTo(r.url, addPath, token, addBody)
				probes.add(sent, ans, err)
				return err == nil && ans.header.Get("Garm-Catalogue-Digest") == digest
			})
			took = append(took, time.Since(published))
		}
		converged = append(converged, took)
	}
	close(stop)
	wg.Wait()

	rank := map[string]int{}
	for i, d := range order {
		rank[d] = i
	}
	all := append([]*answers{probes}, through...)
	for _, a := range all {
		a.only(t, "across the reloads", http.StatusOK)
		for id, ans := range a.byID {
			if _, known := rank[ans.header.Get("Garm-Catalogue-Digest")]; !known {
				t.Errorf("call %s was answered by %q, no generation published", id, ans.header.Get("Garm-Catalogue-Digest"))
			}
		}
	}
	for i, a := range through {
		if back := a.wentBack(rank); back != "" {
			t.Errorf("replica %d went back a generation: %s", i+1, back)
		}
	}
	p.stopReplicas()
	acc := p.accountFor(t, all...)
	rows := map[string]string{}
	for _, e := range p.allLedgerRows() {
		rows[e.GetEventId()] = e.GetCatalogueDigest()
	}
	calls, byGeneration := 0, map[int]int{}
	for _, a := range all {
		for id, ans := range a.byID {
			calls++
			digest := ans.header.Get("Garm-Catalogue-Digest")
			byGeneration[rank[digest]]++
			if row, ok := rows[id]; ok && row != digest {
				t.Errorf("call %s was answered by %s and ledgered against %s", id, digest, row)
			}
		}
	}
	t.Logf("reload across %d replicas: %d calls, by generation %v; each replica serving each new generation at most %v after its publish, replicas probed in turn (poll every %s); "+
		"ledger: %d rows on the stream, %d in the log, %d lost, %d doubled",
		len(p.replicas), calls, byGeneration, converged, shortPoll, acc.streamed, acc.logged, acc.lost, acc.doubled)
}

// wentBack names a call answered by an older generation than one whose
// answer had already been received before the call was sent, "" if none.
func (a *answers) wentBack(rank map[string]int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	// newest[g] is when an answer from generation g first arrived.
	newest := map[int]time.Time{}
	for _, ans := range a.byID {
		g := rank[ans.header.Get("Garm-Catalogue-Digest")]
		if at, ok := newest[g]; !ok || ans.received.Before(at) {
			newest[g] = ans.received
		}
	}
	for id, ans := range a.byID {
		g := rank[ans.header.Get("Garm-Catalogue-Digest")]
		for later, at := range newest {
			if later > g && a.sent[id].After(at) {
				return id + " was answered by generation " + ans.header.Get("Garm-Catalogue-Digest") + " after a newer one had answered"
			}
		}
	}
	return ""
}
