package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The protocol revisions garmd serves.
const (
	handshakeEra = "2025-11-25"
	statelessEra = "2026-07-28"
)

// bearer adds a token to every request an MCP client sends.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpSession is the official Go SDK's client connected to the stack's MCP
// endpoint with token, speaking the given revision.
func mcpSession(t testing.TB, s *Stack, token, version string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "garm-devstack-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             s.URLs().MCP,
		HTTPClient:           &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}, Timeout: waitTimeout},
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// rpc posts one raw JSON-RPC body to the MCP endpoint with header pairs; a
// token is sent when given.
func (c *client) rpc(token, body string, header ...string) answer {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.urls.MCP, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	return c.do(req)
}

// statelessMeta is the _meta a 2026-07-28 request carries.
func statelessMeta(extra map[string]any) map[string]any {
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    statelessEra,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-test-client", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// rpcBody is a JSON-RPC request.
func rpcBody(t testing.TB, id any, method string, params map[string]any) string {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return mustJSON(t, m)
}

// rpcAnswer is a JSON-RPC answer, decoded.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeRPC(t testing.TB, a answer) rpcAnswer {
	t.Helper()
	var r rpcAnswer
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatalf("not a JSON-RPC answer (%d): %s", a.status, a.body)
	}
	return r
}

// compact is JSON without insignificant space, for byte comparisons.
func compact(t testing.TB, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return out.String()
}

// sameJSON reports whether a and b decode to the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s or %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}

// rowFor waits for the ledger row with the event id.
func (l *ledgerReader) rowFor(id string) *ledgerv1.Event {
	l.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		for _, e := range l.rows {
			if e.GetEventId() == id {
				return e
			}
		}
		l.fetch(250 * time.Millisecond)
	}
	l.t.Fatalf("no ledger row %s landed", id)
	return nil
}

// atLeast waits until n rows that match have landed, or the wait ends, and
// answers how many have.
func (l *ledgerReader) atLeast(n int, match func(*ledgerv1.Event) bool) int {
	l.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		count := 0
		for _, e := range l.rows {
			if match(e) {
				count++
			}
		}
		if count >= n || time.Now().After(deadline) {
			return count
		}
		l.fetch(250 * time.Millisecond)
	}
}
