package devplane

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// The round-robin front before a cluster's replicas is a listener of the
// plane like the others: a page rebinding its name to it reaches no
// replica, nor does a post from another origin.
func TestTheClustersFrontPassesNoRebindingPageToAReplica(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = io.WriteString(w, "replica")
	}))
	defer replica.Close()
	target, err := url.Parse(replica.URL)
	if err != nil {
		t.Fatal(err)
	}
	f, base, err := startFront("127.0.0.1:0", []*url.URL{target}, func(int) bool { return true }, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatal(err)
	}
	defer f.srv.Shutdown(context.Background())
	send := func(host string, headers ...string) int {
		req, err := http.NewRequest(http.MethodPost, base+ListToolsRoute, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	port := base[strings.LastIndexByte(base, ':')+1:]
	if status := send("rebound.example:"+port, "Sec-Fetch-Site", "same-origin"); status != http.StatusForbidden {
		t.Errorf("a rebinding Host: %d", status)
	}
	if status := send("", "Sec-Fetch-Site", "cross-site"); status != http.StatusForbidden {
		t.Errorf("a cross-site post: %d", status)
	}
	if reached.Load() != 0 {
		t.Fatalf("the replica was reached %d times", reached.Load())
	}
	if status := send("localhost:" + port); status != http.StatusOK || reached.Load() != 1 {
		t.Errorf("a program's post at localhost: %d, the replica reached %d times", status, reached.Load())
	}
}
