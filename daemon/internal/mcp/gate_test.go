package mcp

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/transport"
)

// The endpoint decides and records nothing itself: every refusal of a
// caller is the chain's, with the chain's row.

func TestADuplicatedSecurityHeaderGetsTheSameRowOverMCPAsOverHTTP(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	for _, header := range []string{"Authorization", "Garm-Grant", "Garm-Timeout-Ms"} {
		r.http(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`, header, "x", header, "y")
		overHTTP := r.rows()
		rec := r.mcp(token, callBody("1", "calc.v1.add", `{"a":1,"b":2}`), header, "x", header, "y")
		overMCP := r.rows()
		if a := decode(t, rec); rec.Code != http.StatusBadRequest || a.Error == nil || a.Error.Code != codeInvalidRequest {
			t.Errorf("%s twice over MCP: %d %s", header, rec.Code, rec.Body)
		}
		if len(overHTTP) != 1 || len(overMCP) != 1 {
			t.Fatalf("%s twice: %d rows over HTTP, %d over MCP", header, len(overHTTP), len(overMCP))
		}
		h, m := overHTTP[0], overMCP[0]
		if h.GetOutcome() != m.GetOutcome() || h.GetErrorKind() != m.GetErrorKind() || h.GetErrorDetail() != m.GetErrorDetail() || m.GetSurface() != "mcp" {
			t.Errorf("%s twice: over HTTP %v, over MCP %v", header, h, m)
		}
		if rec.Header().Get("Garm-Event-Id") != m.GetEventId() {
			t.Errorf("%s twice: the answer names event %q, the row is %q", header, rec.Header().Get("Garm-Event-Id"), m.GetEventId())
		}
	}
	// The protocol version is MCP's own header, read once too.
	rec := r.mcp(token, callBody("1", "calc.v1.add", `{}`), "Mcp-Protocol-Version", VersionHandshake, "Mcp-Protocol-Version", VersionStateless)
	if rows := r.rows(); rec.Code != http.StatusBadRequest || len(rows) != 1 || !strings.Contains(rows[0].GetErrorDetail(), "Mcp-Protocol-Version") {
		t.Errorf("Mcp-Protocol-Version twice: %d, rows %v", rec.Code, rows)
	}
}

func TestEveryMethodOfAnUnauthenticatedCallerIsRefusedByTheChainWithOneRow(t *testing.T) {
	r := newRig(t, nil, 0)
	for _, body := range []string{
		callBody("1", "calc.v1.add", `{"a":1,"b":2}`),
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		for _, token := range []string{"", "not-a-token"} {
			rec := r.mcp(token, body)
			rows := r.rows()
			if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("Www-Authenticate"), `Bearer resource_metadata="`) {
				t.Errorf("%s with %q: %d %v", body, token, rec.Code, rec.Header())
			}
			if len(rows) != 1 || rows[0].GetOutcome() != "denied" || rows[0].GetSurface() != "mcp" || rows[0].GetEventId() != rec.Header().Get("Garm-Event-Id") {
				t.Errorf("%s with %q: rows %v", body, token, rows)
			}
		}
	}
	// Admitted, the lifecycle writes no row, as a successful listing
	// writes none.
	if rec := r.mcp(r.token(t, nil), `{"jsonrpc":"2.0","id":1,"method":"ping"}`); rec.Code != http.StatusOK || len(r.rows()) != 0 {
		t.Errorf("ping: %d %s", rec.Code, rec.Body)
	}
}

func TestAToolsOwn404IsAnIsErrorResultAndNotUnknownTool(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	r.reply = func(context.Context, *transport.Request) (*transport.Reply, error) {
		return &transport.Reply{ErrorCode: "404", Error: "no such " + marker}, nil
	}
	rec := r.mcp(token, callBody("1", "calc.v1.divide", `{"dividend":1,"divisor":1}`))
	a := decode(t, rec)
	if a.Error != nil || a.Result == nil || !a.Result.IsError || !strings.Contains(string(a.Result.Structured), `"tool_code":"404"`) || strings.Contains(rec.Body.String(), marker) {
		t.Fatalf("a tool's own 404: %s", rec.Body)
	}
	if rows := r.rows(); len(rows) != 1 || rows[0].GetErrorKind() != "tool_refused" {
		t.Fatalf("rows %v", rows)
	}
	// An invisible tool and a missing one stay the JSON-RPC error, alike.
	hidden := r.mcp(r.token(t, map[string]any{"clearance": "PUBLIC", "verbs": []string{"WRITE"}}), callBody("1", "calc.v1.add", `{"a":1,"b":2}`))
	missing := r.mcp(token, callBody("1", "calc.v1.nope", `{"a":1,"b":2}`))
	if hidden.Body.String() != missing.Body.String() || decode(t, missing).Error == nil || decode(t, missing).Error.Code != errUnknownTool.code {
		t.Fatalf("invisible %s, missing %s", hidden.Body, missing.Body)
	}
}

// marker is planted in what a caller or a tool sends: no answer echoes it.
const marker = "ZZ-MARKER"

func TestCallErrorMapsByCodeNeverByStatus(t *testing.T) {
	for code, want := range map[string]*rpcError{
		"":                  nil,
		"not_found":         errUnknownTool,
		"unauthenticated":   errUnauthenticated,
		"internal":          errInternal,
		"tool_refused":      nil,
		"invalid_argument":  nil,
		"permission_denied": nil,
		"grant_required":    nil,
		"deadline_exceeded": nil,
		"unavailable":       nil,
	} {
		if got := callError(code); got != want {
			t.Errorf("%q: %v, want %v", code, got, want)
		}
	}
}
