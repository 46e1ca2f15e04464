package garmd_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// hammer has clients concurrent callers, spread over the replicas, each
// calling path until it is answered 429 three times or the run's bound
// ends; during, when set, runs once after the first admissions. It counts
// the answers by status.
func (p *clusterPlane) hammer(t *testing.T, clients int, path, token, body string, during func()) map[int]int64 {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int64{}
	var admitted atomic.Int64
	var once sync.Once
	deadline := time.Now().Add(40 * time.Second)
	var wg sync.WaitGroup
	for i := range clients {
		base := p.replicas[i%len(p.replicas)].url
		wg.Go(func() {
			for limited := 0; limited < 3 && time.Now().Before(deadline); {
				ans, err := p.postTo(base, path, token, body)
				status := 0
				if err == nil {
					status = ans.status
				}
				mu.Lock()
				counts[status]++
				mu.Unlock()
				switch status {
				case http.StatusOK:
					if admitted.Add(1) == 30 && during != nil {
						once.Do(func() { go during() })
					}
				case http.StatusTooManyRequests:
					limited++
				default:
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return counts
}

// Three garmd replicas on a three-node cluster, 24 concurrent clients on
// one hot key: the calls admitted are exactly the limit, twice over; and
// while a node is killed mid-run never more, every other call refused and
// counted.
func TestThreeGarmdReplicasAdmitExactlyTheLimitOnOneHotKeyEvenWhileANodeDies(t *testing.T) {
	const limitOf = 120
	p := startClusterPlane(t, withLimitsOn(t, 3,
		rateLimit("calc.v1.add", "hot_add", limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT),
		rateLimit("calc.v1.divide", "hot_divide", limitOf, toolv1.Limit_WINDOW_DAY, toolv1.Limit_KEY_PART_SUBJECT)))
	token := p.token("public")
	counts := p.hammer(t, 24, addPath, token, `{"a":1,"b":2}`, nil)
	if counts[http.StatusOK] != limitOf || counts[http.StatusTooManyRequests] < 3*24 || len(counts) != 2 {
		t.Fatalf("admitted %d of a limit of %d; answers %v", counts[http.StatusOK], limitOf, counts)
	}
	counts = p.hammer(t, 24, "/calc.v1.Calculator/Divide", token, `{"dividend":1,"divisor":1}`, func() { p.cluster.Nodes[1].Stop() })
	t.Logf("with a node killed mid-run: answers %v", counts)
	if counts[http.StatusOK] > limitOf || counts[http.StatusTooManyRequests] == 0 {
		t.Fatalf("admitted %d of a limit of %d with a node killed; answers %v", counts[http.StatusOK], limitOf, counts)
	}
}
