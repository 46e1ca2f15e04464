package garmd_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// loadAnswer is one answer of the load loop.
type loadAnswer struct {
	status          int
	digest, eventID string
	err             error
}

// call is one Add call made off the test's goroutine: errors are returned,
// not fatal.
func (s *stack) call(token string) loadAnswer {
	req, err := http.NewRequest(http.MethodPost, s.url+addPath, strings.NewReader(`{"a": 1, "b": 2}`))
	if err != nil {
		return loadAnswer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := s.client.Do(req)
	if err != nil {
		return loadAnswer{err: err}
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return loadAnswer{status: resp.StatusCode, digest: resp.Header.Get("Garm-Catalogue-Digest"), eventID: resp.Header.Get("Garm-Event-Id"), err: err}
}

// swapTo publishes data and waits until a call is answered by it.
func (s *stack) swapTo(store *catalogueStore, data []byte) string {
	s.t.Helper()
	digest := store.publish(data)
	eventually(s.t, "generation "+digest+" serving", func() bool {
		return s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`).header.Get("Garm-Catalogue-Digest") == digest
	})
	return digest
}

func TestAReloadUnderLoadAnswersEveryCallFromOneWholeGeneration(t *testing.T) {
	store := startCatalogueStore(t)
	s := startStack(t, withS3Catalogue(store, fixtureCatalogue, shortPoll/2))
	fixture := must(t, fixtureCatalogue)
	token := s.token("public")
	generations := map[string]bool{s.post(addPath, token, `{"a": 1, "b": 2}`).header.Get("Garm-Catalogue-Digest"): true}

	const workers, most = 4, 1500
	stop := make(chan struct{})
	answers := make([][]loadAnswer, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range most {
				select {
				case <-stop:
					return
				default:
				}
				answers[w] = append(answers[w], s.call(token))
			}
		})
	}
	for _, data := range [][]byte{variant(t, fixture, "reload-one"), variant(t, fixture, "reload-two"), must(t, grownCatalogue)} {
		generations[s.swapTo(store, data)] = true
	}
	close(stop)
	wg.Wait()

	var all []loadAnswer
	seen := map[string]int{}
	for _, each := range answers {
		for _, a := range each {
			if a.err != nil || a.status != http.StatusOK || !generations[a.digest] {
				t.Fatalf("an answer during the reloads: %d from %q, %v", a.status, a.digest, a.err)
			}
			seen[a.digest]++
			all = append(all, a)
		}
	}
	rows := s.rowsOf(all)
	for _, a := range all {
		if row := rows[a.eventID]; row.GetCatalogueDigest() != a.digest || row.GetOutcome() != "ok" {
			t.Fatalf("answered by %s, ledgered against %s (%s)", a.digest, row.GetCatalogueDigest(), row.GetOutcome())
		}
	}
	if len(generations) != 4 || len(seen) < 2 {
		t.Errorf("%d generations; the load loop saw %d of them: %v", len(generations), len(seen), seen)
	}
	t.Logf("%d calls across the swaps, by generation: %v", len(all), seen)
}

// rowsOf waits until every answer's ledger row has landed on GARM_LEDGER,
// reading the stream in bulk rather than a row at a time.
func (s *stack) rowsOf(answers []loadAnswer) map[string]*ledgerv1.Event {
	s.t.Helper()
	byID := map[string]*ledgerv1.Event{}
	eventually(s.t, "every row on the ledger", func() bool {
		for _, row := range s.ledgerRows() {
			byID[row.GetEventId()] = row
		}
		for _, a := range answers {
			if byID[a.eventID] == nil {
				return false
			}
		}
		return true
	})
	return byID
}

// servingNow is a weak pointer to the generation serving, so the test
// itself holds no strong one.
func servingNow(s *stack) weak.Pointer[catalogue.Generation] {
	return weak.Make(s.daemon.ServingGeneration())
}

func TestAReloadDoesNotKeepOldGenerationsAlive(t *testing.T) {
	store := startCatalogueStore(t)
	s := startStack(t, withS3Catalogue(store, fixtureCatalogue, shortPoll/2))
	fixture := must(t, fixtureCatalogue)
	var old []weak.Pointer[catalogue.Generation]
	for i := range 4 {
		if ans := s.post(addPath, s.token("public"), `{"a": 1, "b": 2}`); ans.status != http.StatusOK {
			t.Fatalf("%d %s", ans.status, ans.body)
		}
		old = append(old, servingNow(s))
		s.swapTo(store, variant(t, fixture, fmt.Sprintf("generation-%d", i+1)))
	}
	current := servingNow(s)
	deadline := time.Now().Add(waitTimeout)
	for {
		runtime.GC()
		alive := 0
		for _, w := range old {
			if w.Value() != nil {
				alive++
			}
		}
		if alive == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d replaced generations are still alive after their calls finished", alive, len(old))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if current.Value() == nil {
		t.Error("the serving generation was collected")
	}
}
