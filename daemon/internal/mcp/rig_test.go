package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/chain/authn"
	"github.com/garm-dev/garm/daemon/internal/chain/dispatch"
	"github.com/garm-dev/garm/daemon/internal/chain/input"
	"github.com/garm-dev/garm/daemon/internal/chain/redact"
	"github.com/garm-dev/garm/daemon/internal/keyset/keysettest"
	"github.com/garm-dev/garm/daemon/internal/ledger/memory"
	"github.com/garm-dev/garm/daemon/internal/listing"
	"github.com/garm-dev/garm/daemon/internal/toolplane"
	"github.com/garm-dev/garm/daemon/internal/transport"
	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
)

const issuer = "https://idp.mcp.test"

// rig is the MCP endpoint and the HTTP route over one real chain: a real
// authenticator with a key made at run time, the real lister, input
// checker and redactor, a memory ledger, and a transport the test writes
// in place of the bus.
type rig struct {
	server   *Server
	plane    *toolplane.Plane
	chain    *chain.Chain
	recorder *memory.Recorder
	key      *keysettest.Key
	// reply answers every dispatched call; nil answers the calculator's
	// Add with 3.
	reply transport.Func
}

// newRig serves gen; a nil gen is the calculator, mounted.
func newRig(tb testing.TB, gen *catalogue.Generation, pageSize int) *rig {
	tb.Helper()
	if gen == nil {
		var err error
		if gen, err = catalogue.Load(cataloguetest.Calculator(tb), catalogue.Options{}); err != nil {
			tb.Fatal(err)
		}
		if err := catalogue.Mount(gen, catalogue.Steps{}); err != nil {
			tb.Fatal(err)
		}
	}
	serving := new(catalogue.Serving)
	serving.Store(gen)
	r := &rig{recorder: memory.New(), key: keysettest.NewKey(tb, "ES256", "k1")}
	keys := keysettest.NewServer(tb, r.key)
	a, err := authn.New(authn.Config{Issuers: []authn.Issuer{{Name: issuer, JWKSURL: keys.URL}}, Audience: "garm"})
	if err != nil {
		tb.Fatal(err)
	}
	r.chain = chain.New(chain.Config{
		Serving:  serving,
		Authn:    a,
		Input:    input.NewChecker(64),
		Redact:   redact.New(64, []byte("an mcp test hash key")),
		Lister:   listing.New(listing.Options{}),
		Recorder: r.recorder,
		Dispatch: dispatch.New(transport.Func(func(ctx context.Context, req *transport.Request) (*transport.Reply, error) {
			if r.reply != nil {
				return r.reply(ctx, req)
			}
			return &transport.Reply{Body: sum3}, nil
		})),
		ToolTimeout: 5 * time.Second,
		Version:     "test",
	})
	r.server, err = New(Config{
		Chain:     r.chain,
		Resource:  "https://garm.example/mcp",
		CursorKey: []byte("0123456789abcdef0123456789abcdef"),
		PageSize:  pageSize,
	})
	if err != nil {
		tb.Fatal(err)
	}
	r.plane = toolplane.New(r.chain, toolplane.Limits{})
	return r
}

// sum3 is the calculator's AddResponse{sum: 3} on the wire.
var sum3 = []byte{0x09, 0, 0, 0, 0, 0, 0, 0x08, 0x40}

// token is a token with garm claims; a PUBLIC reader's when garm is nil.
func (r *rig) token(tb testing.TB, garm map[string]any) string {
	tb.Helper()
	if garm == nil {
		garm = map[string]any{"clearance": "PUBLIC", "verbs": []string{"READ"}}
	}
	claims, _ := json.Marshal(map[string]any{
		"iss": issuer, "sub": "user:t", "aud": "garm", "exp": time.Now().Add(time.Hour).Unix(), "garm": garm,
	})
	return r.key.Sign(tb, claims)
}

// mcp posts body to the endpoint with token ("" sends none) and header
// pairs; the answer is recorded.
func (r *rig) mcp(token, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	r.server.ServeHTTP(rec, req)
	return rec
}

// http posts body to the tool route path with token and header pairs.
func (r *rig) http(token, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	r.plane.ServeHTTP(rec, req)
	return rec
}

// rows are the rows written since the last call, which it forgets.
func (r *rig) rows() []*ledgerv1.Event {
	rows := r.recorder.Rows()
	r.recorder.Reset()
	return rows
}

// rpcAnswer is a JSON-RPC answer as the tests read it.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError    bool            `json:"isError"`
		Structured json.RawMessage `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decode(tb testing.TB, rec *httptest.ResponseRecorder) rpcAnswer {
	tb.Helper()
	var a rpcAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		tb.Fatalf("not a JSON-RPC answer: %d %s", rec.Code, rec.Body)
	}
	return a
}

// callBody is a tools/call of name with args (a JSON object) and id.
func callBody(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}
