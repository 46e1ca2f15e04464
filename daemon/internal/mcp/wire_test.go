package mcp

import (
	"net/http"
	"strings"
	"testing"
	"unicode"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain"
)

func TestAnIDComesBackAsSentFromEveryMethod(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	for _, id := range []string{`1`, `-9223372036854775808`, `9223372036854775807`, `"\u0041"`, `"a\"b"`, `""`, `"1.5"`} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list"}`,
			callBody(id, "calc.v1.add", `{"a":1,"b":2}`),
			callBody(id, "calc.v1.nope", `{}`),
			`{"jsonrpc":"2.0","id":` + id + `,"method":"resources/list"}`,
		} {
			rec := r.mcp(token, body)
			if !strings.HasPrefix(rec.Body.String(), `{"jsonrpc":"2.0","id":`+id+`,`) {
				t.Errorf("%s: %d %s", body, rec.Code, rec.Body)
			}
		}
	}
}

func TestAnIDThatIsNotAStringOrAnInt64IsRefused(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	for _, id := range []string{`1.5`, `1e3`, `1.0`, `-0.0`, `9223372036854775808`, `-9223372036854775809`, `null`, `true`, `{}`, `[1]`} {
		for _, method := range []string{"ping", "initialize", "tools/list", "tools/call"} {
			rec := r.mcp(token, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`"}`)
			if a := decode(t, rec); a.Error == nil || a.Error.Code != codeInvalidRequest || string(a.ID) != "null" {
				t.Errorf("id %s on %s: %d %s", id, method, rec.Code, rec.Body)
			}
		}
	}
}

func TestMetaIsReadByItsExactNameOnce(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	// _META is not _meta: a 2026-07-28 request without _meta's version is
	// refused, whatever a member of another case says.
	for _, meta := range []string{`"_META"`, `"_Meta"`} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `:{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
		if a := decode(t, r.mcp(token, body, "Mcp-Protocol-Version", VersionStateless)); a.Error == nil || a.Error.Code != codeInvalidParams {
			t.Errorf("%s passed the era check", meta)
		}
	}
	// Keys inside _meta are exact too: a differently cased traceparent
	// sets nothing.
	req, rerr := parseRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"TRACEPARENT":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","Tracestate":"a=b"}}}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if tp, ts := callTrace(http.Header{}, new(chain.Request), req.meta); tp != "" || ts != "" {
		t.Errorf("a differently cased key set the trace: %q %q", tp, ts)
	}
	req, _ = parseRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`))
	if tp, _ := callTrace(http.Header{}, new(chain.Request), req.meta); tp == "" {
		t.Error("_meta's traceparent was not read")
	}
	// A _meta given twice, or one that is not an object, is refused.
	for _, params := range []string{`{"_meta":{},"_meta":{}}`, `{"_meta":[1]}`, `{"_meta":{"a":1,"a":2}}`} {
		if _, rerr := parseRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`)); rerr != errInvalidParams {
			t.Errorf("%s: %v", params, rerr)
		}
	}
}

func TestAToolNameACallerSendsReachesTheRowWithoutControlCharacters(t *testing.T) {
	r := newRig(t, nil, 0)
	name := `calc.v1.\u001b[31mnope\n{\"outcome\":\"ok\"}\u2028\u0085`
	rec := r.mcp(r.token(t, nil), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
	if a := decode(t, rec); a.Error == nil || a.Error.Code != errUnknownTool.code {
		t.Fatalf("%s", rec.Body)
	}
	rows := r.rows()
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
	for column, v := range map[string]string{"tool": rows[0].GetTool(), "method": rows[0].GetMethod(), "detail": rows[0].GetErrorDetail()} {
		if strings.IndexFunc(v, func(c rune) bool { return unicode.IsControl(c) || c == 0x2028 }) >= 0 {
			t.Errorf("the row's %s holds a control character: %q", column, v)
		}
	}
	if !strings.HasPrefix(rows[0].GetTool(), unroutablePrefix+"calc.v1.") {
		t.Errorf("tool %q", rows[0].GetTool())
	}
}

func TestEveryPerCallerAnswerIsPrivateAndNotStored(t *testing.T) {
	r := newRig(t, nil, 0)
	token := r.token(t, nil)
	answers := map[string]http.Header{
		"tools/list":           r.mcp(token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).Header(),
		"tools/call":           r.mcp(token, callBody("1", "calc.v1.add", `{"a":1,"b":2}`)).Header(),
		"ping":                 r.mcp(token, `{"jsonrpc":"2.0","id":1,"method":"ping"}`).Header(),
		"an MCP refusal":       r.mcp("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`).Header(),
		"the HTTP listing":     r.http(token, catalogue.ListingMethod, `{}`).Header(),
		"an HTTP call":         r.http(token, "/calc.v1.Calculator/Add", `{"a":1,"b":2}`).Header(),
		"an HTTP refusal":      r.http("", "/calc.v1.Calculator/Add", `{}`).Header(),
		"a malformed JSON-RPC": r.mcp(token, `{`).Header(),
	}
	for name, h := range answers {
		if got := h.Get("Cache-Control"); got != "private, no-store" {
			t.Errorf("%s: Cache-Control %q", name, got)
		}
	}
}
