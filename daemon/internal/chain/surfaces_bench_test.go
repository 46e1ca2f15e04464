package chain_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/mcp"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
	"github.com/garm-dev/garm/daemon/internal/transport"
)

// BenchmarkToolCallMCPOverHTTPRouteInProcess is issue 18's budget measured
// in process: the same call, calc.v1.add, through the tool plane's HTTP
// route and through tools/call at /mcp, each served by its handler with no
// network (the transport answers at once). It reports each surface's
// median and the MCP one's median over the HTTP route's (budget: at most
// 15 µs).
func BenchmarkToolCallMCPOverHTTPRouteInProcess(b *testing.B) {
	r := newRigRecording(b, discard{})
	answer := &transport.Reply{Body: []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}}
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) { return answer, nil }
	plane := toolplane.New(r.chain, toolplane.Limits{})
	const host = "127.0.0.1:7440"
	endpoint, err := mcp.New(mcp.Config{Chain: r.chain, Resource: "http://" + host + "/mcp", AuthorizationServers: []string{issuer},
		CursorKey: []byte("a cursor key of more than sixteen bytes"), Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	token := "Bearer " + r.token(b)
	viaHTTP := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://"+host+"/calc.v1.Calculator/Add", strings.NewReader(`{"a":1,"b":2}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", token)
		return req
	}
	viaMCP := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "http://"+host+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calc.v1.add","arguments":{"a":1,"b":2}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", token)
		return req
	}
	medians := map[string]time.Duration{}
	for _, s := range []struct {
		name    string
		handler http.Handler
		request func() *http.Request
	}{{"http", plane, viaHTTP}, {"mcp", endpoint, viaMCP}} {
		b.Run(s.name, func(b *testing.B) {
			serve := func() {
				w := httptest.NewRecorder()
				s.handler.ServeHTTP(w, s.request())
				if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"isError":true`) {
					b.Fatalf("%s answered %d %s", s.name, w.Code, w.Body)
				}
			}
			for range 200 { // warm the caches
				serve()
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				serve()
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			median := took[len(took)/2]
			medians[s.name] = median
			b.ReportMetric(float64(median.Nanoseconds())/1e3, "p50-µs")
			if s.name == "mcp" {
				b.ReportMetric(float64((median-medians["http"]).Nanoseconds())/1e3, "p50-over-http-µs")
			}
		})
	}
}
