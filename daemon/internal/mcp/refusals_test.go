package mcp

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// What the endpoint refuses before the chain: each with a static JSON-RPC
// error that never quotes the request, and no row.
func TestTheGateRefusesWhatIsNotOneJSONRPCRequestWithoutEchoingIt(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	cases := []struct {
		name   string
		body   string
		header []string
		status int
		code   int
	}{
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"` + marker + `"}]`, nil, http.StatusBadRequest, codeInvalidRequest},
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":"` + marker, nil, http.StatusBadRequest, codeParseError},
		{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":1,"method":"` + marker + `"}`, nil, http.StatusBadRequest, codeInvalidRequest},
		{"an object id", `{"jsonrpc":"2.0","id":{"m":"` + marker + `"},"method":"ping"}`, nil, http.StatusBadRequest, codeInvalidRequest},
		{"a member twice", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"` + marker + `"}`, nil, http.StatusBadRequest, codeInvalidRequest},
		{"an unknown protocol version", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Mcp-Protocol-Version", marker}, http.StatusBadRequest, codeUnsupportedVersion},
		{"_meta without the header", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, nil, http.StatusBadRequest, codeHeaderMismatch},
		{"another media type", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType, codeInvalidRequest},
		{"a foreign Origin", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Origin", "https://" + marker + ".example"}, http.StatusForbidden, codeInvalidRequest},
	}
	for _, tc := range cases {
		req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(tc.header); i += 2 {
			req.Header.Set(tc.header[i], tc.header[i+1])
		}
		rec := httptest.NewRecorder()
		r.server.ServeHTTP(rec, req)
		a := decode(t, rec)
		if rec.Code != tc.status || a.Error == nil || a.Error.Code != tc.code || strings.Contains(rec.Body.String(), marker) {
			t.Errorf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
		if rows := r.rows(); len(rows) != 0 {
			t.Errorf("%s: %d rows", tc.name, len(rows))
		}
	}
	// A method other than POST, and a Host a loopback listener does not
	// serve (DNS rebinding).
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		rec := httptest.NewRecorder()
		r.server.ServeHTTP(rec, httptest.NewRequest(method, Path, nil))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != http.MethodPost {
			t.Errorf("%s: %d %v", method, rec.Code, rec.Header())
		}
	}
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Host = marker + ".example"
	req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7440}))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	r.server.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), marker) {
		t.Errorf("a rebinding Host: %d %s", rec.Code, rec.Body)
	}
}

func TestTheMetadataNamesTheResourceAndTheChallengePointsAtIt(t *testing.T) {
	r := newRig(t, nil, 0)
	rec := r.mcp("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	challenge := rec.Header().Get("Www-Authenticate")
	want := `Bearer resource_metadata="https://garm.example/.well-known/oauth-protected-resource/mcp"`
	if rec.Code != http.StatusUnauthorized || challenge != want {
		t.Fatalf("%d %q", rec.Code, challenge)
	}
	for _, path := range []string{MetadataPath, MetadataPath + "/mcp"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if !r.server.Owns(req) {
			t.Errorf("%s is not the endpoint's", path)
		}
		rec := httptest.NewRecorder()
		r.server.ServeHTTP(rec, req)
		var meta struct {
			Resource string `json:"resource"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &meta); err != nil || meta.Resource != "https://garm.example/mcp" {
			t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		}
	}
}
