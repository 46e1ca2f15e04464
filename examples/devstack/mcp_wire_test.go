package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

// marker is planted in hostile requests: no answer may echo it.
const marker = "ZZ-ECHO-MARKER"

// TestMCPWire holds the MCP endpoint to the wire the spec asks for and to
// garm's static answers: a private cache scope, resultType where the
// 2026-07-28 revision needs it, a foreign Origin refused, 401 pointing at
// the metadata, and every malformed input refused without echoing it.
func TestMCPWire(t *testing.T) {
	s := startStack(t, testOptions(t))
	c := newClient(t, s)
	ledger := readLedger(t, s)
	d := bankDemo()
	token := c.token(d.support, "")
	mcpURL := s.URLs().MCP
	newHeader := []string{"Mcp-Protocol-Version", statelessEra}

	t.Run("tools/list is private to its caller in both revisions, and only 2026-07-28 carries resultType", func(t *testing.T) {
		legacy := c.rpc(token, rpcBody(t, 1, "tools/list", nil))
		stateless := c.rpc(token, rpcBody(t, 1, "tools/list", map[string]any{"_meta": statelessMeta(nil)}), newHeader...)
		for name, a := range map[string]answer{"legacy": legacy, "stateless": stateless} {
			var r struct {
				CacheScope string `json:"cacheScope"`
				ResultType string `json:"resultType"`
				Tools      []any  `json:"tools"`
			}
			if err := json.Unmarshal(decodeRPC(t, a).Result, &r); err != nil || a.status != http.StatusOK || len(r.Tools) == 0 {
				t.Fatalf("%s: %d %s", name, a.status, a.body)
			}
			if r.CacheScope != "private" {
				t.Errorf("%s: cacheScope %q", name, r.CacheScope)
			}
			if want := map[string]string{"legacy": "", "stateless": "complete"}[name]; r.ResultType != want {
				t.Errorf("%s: resultType %q, want %q", name, r.ResultType, want)
			}
		}
	})

	t.Run("a tools/call result carries resultType in 2026-07-28, and a refusal is an isError result", func(t *testing.T) {
		a := c.rpc(token, rpcBody(t, "c1", "tools/call", map[string]any{"name": d.customerTool, "arguments": d.customerRequest, "_meta": statelessMeta(nil)}), newHeader...)
		var r struct {
			ResultType string         `json:"resultType"`
			IsError    bool           `json:"isError"`
			Meta       map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(decodeRPC(t, a).Result, &r); err != nil || r.ResultType != "complete" || r.IsError || r.Meta["io.modelcontextprotocol/serverInfo"] == nil {
			t.Fatalf("%s", a.body)
		}
		if a.header.Get("Garm-Event-Id") == "" || a.header.Get("Garm-Catalogue-Digest") == "" {
			t.Errorf("the call's answer lacks garm's headers: %v", a.header)
		}
		bad := c.rpc(token, rpcBody(t, "c2", "tools/call", map[string]any{"name": d.customerTool, "arguments": map[string]any{"customer_id": marker, "nope": 1}}))
		if err := json.Unmarshal(decodeRPC(t, bad).Result, &r); err != nil || !r.IsError || strings.Contains(bad.body, marker) {
			t.Fatalf("%s", bad.body)
		}
	})

	t.Run("a foreign Origin and a rebinding Host are refused with 403", func(t *testing.T) {
		body := rpcBody(t, 1, "tools/list", nil)
		for name, h := range map[string][]string{
			"foreign origin": {"Origin", "https://evil.example"},
			"cross-site":     {"Sec-Fetch-Site", "cross-site"},
			"rebinding host": {"Host", "evil.example"},
		} {
			req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			if h[0] == "Host" {
				req.Host = h[1]
			} else {
				req.Header.Set(h[0], h[1])
			}
			if a := c.do(req); a.status != http.StatusForbidden || strings.Contains(a.body, "evil") {
				t.Errorf("%s: %d %s", name, a.status, a.body)
			}
		}
	})

	t.Run("no token is 401 pointing at the metadata, which names the resource and its issuer, and writes a row", func(t *testing.T) {
		for _, tok := range []string{"", "not-a-token-" + marker} {
			a := c.rpc(tok, rpcBody(t, 1, "tools/list", nil))
			challenge := a.header.Get("WWW-Authenticate")
			if a.status != http.StatusUnauthorized || strings.Contains(a.body, marker) || !strings.HasPrefix(challenge, `Bearer resource_metadata="`) {
				t.Fatalf("%d %q %s", a.status, challenge, a.body)
			}
			metaURL := strings.TrimSuffix(strings.TrimPrefix(challenge, `Bearer resource_metadata="`), `"`)
			if metaURL != strings.TrimSuffix(mcpURL, "/mcp")+"/.well-known/oauth-protected-resource/mcp" {
				t.Fatalf("the metadata is said to be at %s", metaURL)
			}
			for _, u := range []string{metaURL, strings.TrimSuffix(metaURL, "/mcp")} {
				req, _ := http.NewRequest(http.MethodGet, u, nil)
				m := c.do(req)
				var meta struct {
					Resource             string   `json:"resource"`
					AuthorizationServers []string `json:"authorization_servers"`
				}
				if err := json.Unmarshal([]byte(m.body), &meta); err != nil || meta.Resource != mcpURL || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != s.IdP().Issuer() {
					t.Fatalf("GET %s: %d %s", u, m.status, m.body)
				}
			}
		}
		refused := ledger.atLeast(2, func(row *ledgerv1.Event) bool {
			return row.GetSurface() == "mcp" && row.GetTool() == "/mcp" && row.GetOutcome() == "denied" && row.GetErrorDetail() != ""
		})
		if refused < 2 {
			t.Errorf("%d rows record the refused tokens", refused)
		}
	})

	t.Run("GET and DELETE are refused as a stateless server refuses them", func(t *testing.T) {
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(method, mcpURL, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			if a := c.do(req); a.status != http.StatusMethodNotAllowed || a.header.Get("Allow") != http.MethodPost {
				t.Errorf("%s: %d %v", method, a.status, a.header)
			}
		}
	})

	t.Run("malformed JSON-RPC gets a static JSON-RPC error, never a word of the request", func(t *testing.T) {
		cases := []struct {
			name   string
			body   string
			header []string
			code   int
		}{
			{"a batch", `[` + rpcBody(t, 1, "tools/list", map[string]any{"m": marker}) + `]`, nil, -32600},
			{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":"` + marker, nil, -32700},
			{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":1,"method":"tools/list","x":"` + marker + `"}`, nil, -32600},
			{"an id that is an object", `{"jsonrpc":"2.0","id":{"m":"` + marker + `"},"method":"tools/list"}`, nil, -32600},
			{"a member given twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"` + marker + `"}`, nil, -32600},
			{"an unknown method", rpcBody(t, 1, marker+"/list", nil), nil, -32601},
			{"a resources method", rpcBody(t, 1, "resources/list", nil), nil, -32601},
			{"tools/call without a name", rpcBody(t, 1, "tools/call", map[string]any{"arguments": map[string]any{"m": marker}}), nil, -32602},
			{"arguments that are not an object", rpcBody(t, 1, "tools/call", map[string]any{"name": d.customerTool, "arguments": []string{marker}}), nil, -32602},
			{"a forged cursor", rpcBody(t, 1, "tools/list", map[string]any{"cursor": marker}), nil, -32602},
			{"an unknown protocol version header", rpcBody(t, 1, "tools/list", nil), []string{"Mcp-Protocol-Version", marker}, -32004},
			{"a header that disagrees with _meta", rpcBody(t, 1, "tools/list", map[string]any{"_meta": statelessMeta(map[string]any{"io.modelcontextprotocol/protocolVersion": handshakeEra})}), newHeader, -32001},
			{"_meta without the header", rpcBody(t, 1, "tools/list", map[string]any{"_meta": statelessMeta(nil)}), nil, -32001},
			{"a grant in _meta and in a header", rpcBody(t, 1, "tools/call", map[string]any{"name": d.customerTool, "arguments": d.customerRequest, "_meta": map[string]any{"dev.garm/grant": marker}}), []string{"Garm-Grant", marker}, -32602},
			{"Authorization given twice", rpcBody(t, 1, "tools/list", nil), []string{"Authorization", "Bearer " + marker}, -32600},
			{"initialize with bad params, answered by the SDK", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":{"x":"` + marker + `"}}}`, nil, 0},
		}
		for _, tc := range cases {
			a := c.rpc(token, tc.body, tc.header...)
			r := decodeRPC(t, a)
			if r.Error == nil || (tc.code != 0 && r.Error.Code != tc.code) || strings.Contains(a.body, marker) || strings.Contains(a.body, "tools/list") {
				t.Errorf("%s: %d %s", tc.name, a.status, a.body)
			}
		}
		// A body declared over the limit is refused before it is read.
		conn, err := net.Dial("tcp", strings.TrimPrefix(strings.TrimSuffix(mcpURL, "/mcp"), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", token, 16<<20+1)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("a body over the limit: %d", resp.StatusCode)
		}
		if a := c.rpc(token, rpcBody(t, 1, "ping", nil)); a.status != http.StatusOK || decodeRPC(t, a).Error != nil {
			t.Fatalf("after the hostile requests, ping answered %d %s", a.status, a.body)
		}
	})
}
