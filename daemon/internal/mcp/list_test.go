package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
)

// largeFixture is a generation of 1,000 tools (10 packages of 100), each
// READ at INTERNAL in the support set, a rig listing it, and the token of a
// caller who sees every one.
func largeFixture(tb testing.TB, pageSize int) (*rig, *catalogue.Generation, string) {
	tb.Helper()
	// Built once per test binary and shared read-only: it is most of the
	// package's test time.
	large.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-large-")
		if err != nil {
			large.err = err
			return
		}
		defer os.RemoveAll(dir)
		cataloguetest.WriteLarge(tb, dir, 10, 100)
		large.gen, large.err = catalogue.Load(cataloguetest.Build(tb, dir), catalogue.Options{})
	})
	if large.err != nil || large.gen == nil {
		tb.Fatalf("the large fixture: %v", large.err)
	}
	g := large.gen
	r := newRig(tb, g, pageSize)
	return r, g, r.token(tb, map[string]any{"clearance": "INTERNAL", "compartments": []string{"pii-contact"}, "verbs": []string{"READ"}})
}

var large struct {
	once sync.Once
	gen  *catalogue.Generation
	err  error
}

type listPage struct {
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
	CacheScope string `json:"cacheScope"`
}

// listAll walks every page for the caller of token, answering the names
// listed and the pages.
func listAll(tb testing.TB, r *rig, token string) (names []string, pages int) {
	tb.Helper()
	cursor := ""
	for {
		params := ""
		if cursor != "" {
			params = `,"params":{"cursor":"` + cursor + `"}`
		}
		rec := r.mcp(token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"`+params+`}`)
		var a struct {
			Result listPage `json:"result"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &a) != nil || a.Result.CacheScope != "private" {
			tb.Fatalf("page %d: %d %.300s", pages, rec.Code, rec.Body.Bytes())
		}
		pages++
		for _, t := range a.Result.Tools {
			names = append(names, t.Name)
		}
		if cursor = a.Result.NextCursor; cursor == "" {
			return names, pages
		}
	}
}

func TestAThousandToolsArePagedAndEveryPageResumesWhereTheLastEnded(t *testing.T) {
	r, g, token := largeFixture(t, 300)
	names, pages := listAll(t, r, token)
	if len(names) != 1000 || pages != 4 {
		t.Fatalf("listed %d tools in %d pages", len(names), pages)
	}
	for i := range names {
		if names[i] != g.Tools[i].FQN {
			t.Fatalf("tool %d is %s, want %s", i, names[i], g.Tools[i].FQN)
		}
	}
}

func TestACursorIsRefusedUnlessThisServerIssuedItForTheServingGeneration(t *testing.T) {
	r, g, token := largeFixture(t, 300)
	s := r.server
	good := s.cursor(g, g.Tools[299].FQN)
	if after, err := s.resume(g, good); err != nil || after != g.Tools[299].FQN {
		t.Fatalf("a good cursor resumes after %q, %v", after, err)
	}
	other := &catalogue.Generation{Digest: "sha256:another", Tools: g.Tools}
	forged := s.cursor(other, g.Tools[299].FQN)
	stranger, err := New(Config{Chain: s.chain, Resource: "https://garm.example/mcp", CursorKey: []byte("another key of sixteen bytes!!")})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]string{
		"another generation's": forged,
		"another key's":        stranger.cursor(g, g.Tools[299].FQN),
		"no MAC":               good[:len(good)-22],
		"garbage":              "not-a-cursor",
		"empty":                "",
		"name swapped":         s.cursor(g, g.Tools[10].FQN)[:len(s.cursor(g, g.Tools[10].FQN))-23] + good[len(good)-23:],
	} {
		if _, err := s.resume(g, c); err == nil {
			t.Errorf("%s cursor was accepted", name)
		}
		// Refused by the chain, which records it, as -32602.
		rec := r.mcp(token, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"`+c+`"}}`)
		if a := decode(t, rec); a.Error == nil || a.Error.Code != codeInvalidParams {
			t.Errorf("%s cursor: %s", name, rec.Body)
		}
		if rows := r.rows(); len(rows) != 1 || rows[0].GetOutcome() != "denied" || rows[0].GetErrorDetail() == "" {
			t.Errorf("%s cursor: rows %v", name, rows)
		}
	}
}

// BenchmarkToolsListThousandVisibleWarm lists 1,000 visible tools over
// tools/list, every page (two of DefaultPageSize), with the lister's and
// the tool cache warm. The budget is 2 ms.
func BenchmarkToolsListThousandVisibleWarm(b *testing.B) {
	r, g, token := largeFixture(b, 0)
	if names, pages := listAll(b, r, token); len(names) != 1000 || pages != 2 {
		b.Fatalf("%d tools in %d pages", len(names), pages)
	}
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + r.server.cursor(g, g.Tools[DefaultPageSize-1].FQN) + `"}}`,
	}
	w := &discard{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			w.n = 0
			req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			r.server.ServeHTTP(w, req)
			if w.status != http.StatusOK || w.n < 100_000 {
				b.Fatalf("%d, %d bytes", w.status, w.n)
			}
		}
	}
}

// discard is a ResponseWriter that keeps only the status and the length.
type discard struct {
	header http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) WriteHeader(status int)      { d.status = status }
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
