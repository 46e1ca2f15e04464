package main

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkToolCallMCPOverHTTPRoute makes the same call, calc.v1.add as the
// analyst, through garmd's HTTP route and through tools/call at /mcp, over
// one kept-alive loopback connection each, against a stack started as main
// starts it. Each reports its median; the MCP one also reports its median
// over the HTTP route's (the budget: at most 15 µs).
func BenchmarkToolCallMCPOverHTTPRoute(b *testing.B) {
	s := startStack(b, testOptions(b))
	c := newClient(b, s)
	token := c.token(bankDemo().analyst, "")
	urls := s.URLs()
	var addRoute string
	for _, tool := range s.Catalogue().Artifact.Tools() {
		if tool.FQN == "calc.v1.add" {
			addRoute = tool.Method
		}
	}
	httpClient := &http.Client{Timeout: waitTimeout}
	post := func(url, body string, header ...string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s answered %d", url, resp.StatusCode)
		}
	}
	viaHTTP := func() { post(urls.Garmd+addRoute, `{"a":1,"b":2}`) }
	viaMCP := func() {
		post(urls.MCP, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calc.v1.add","arguments":{"a":1,"b":2}}}`,
			"Accept", "application/json, text/event-stream")
	}
	medians := map[string]time.Duration{}
	for _, bc := range []struct {
		name string
		call func()
	}{{"http", viaHTTP}, {"mcp", viaMCP}} {
		b.Run(bc.name, func(b *testing.B) {
			for range 200 { // warm the caches and the connection
				bc.call()
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				bc.call()
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			medians[bc.name] = took[len(took)/2]
			b.ReportMetric(float64(medians[bc.name].Microseconds()), "p50-µs")
			if bc.name == "mcp" {
				if base, ok := medians["http"]; ok {
					b.ReportMetric(float64((medians["mcp"]-base).Nanoseconds())/1000, "p50-over-http-µs")
				}
			}
		})
	}
}
