package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/cataloguetest"
	"github.com/garm-dev/garm/daemon/internal/chain"
	"github.com/garm-dev/garm/daemon/internal/listing"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// largeFixture is a generation of 1,000 tools (10 packages of 100), each
// READ at INTERNAL in the support set, and a server listing it.
func largeFixture(tb testing.TB, pageSize int) (*Server, *catalogue.Generation, *call.Principal) {
	tb.Helper()
	dir := tb.TempDir()
	cataloguetest.WriteLarge(tb, dir, 10, 100)
	g, err := catalogue.Load(cataloguetest.Build(tb, dir), catalogue.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	serving := new(catalogue.Serving)
	serving.Store(g)
	s, err := New(Config{
		Chain:     chain.New(chain.Config{Serving: serving, Lister: listing.New(listing.Options{})}),
		Resource:  "https://garm.example/mcp",
		CursorKey: []byte("0123456789abcdef0123456789abcdef"),
		PageSize:  pageSize,
	})
	if err != nil {
		tb.Fatal(err)
	}
	set, kept, _ := g.CompartmentSet([]string{"pii-contact"})
	p := &call.Principal{Subject: "user:bench", Clearance: toolv1.Clearance_CLEARANCE_INTERNAL,
		Compartments: set, CompartmentNames: kept, Verbs: call.VerbsOf(toolv1.Verb_VERB_READ)}
	return s, g, p
}

type listPage struct {
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
	CacheScope string `json:"cacheScope"`
}

// listAll walks every page for p, answering the names listed and the pages.
func listAll(tb testing.TB, s *Server, g *catalogue.Generation, p *call.Principal) (names []string, pages int) {
	tb.Helper()
	cursor := ""
	for {
		params := json.RawMessage(nil)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		rec := httptest.NewRecorder()
		s.listTools(rec, g, p, &rpcRequest{id: json.RawMessage("1"), method: "tools/list", params: params}, era{})
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
	s, g, p := largeFixture(t, 300)
	names, pages := listAll(t, s, g, p)
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
	s, g, _ := largeFixture(t, 300)
	good := s.cursor(g, g.Tools[299].FQN)
	if at, ok := s.resume(g, good); !ok || at != 300 {
		t.Fatalf("a good cursor resumes at %d, %v", at, ok)
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
		if _, ok := s.resume(g, c); ok {
			t.Errorf("%s cursor was accepted", name)
		}
	}
}

// BenchmarkToolsListThousandVisibleWarm lists 1,000 visible tools over
// tools/list, every page (two of DefaultPageSize), with the lister's and
// the tool cache warm. The budget is 2 ms.
func BenchmarkToolsListThousandVisibleWarm(b *testing.B) {
	s, g, p := largeFixture(b, 0)
	if names, pages := listAll(b, s, g, p); len(names) != 1000 || pages != 2 {
		b.Fatalf("%d tools in %d pages", len(names), pages)
	}
	second, _ := json.Marshal(map[string]string{"cursor": s.cursor(g, g.Tools[DefaultPageSize-1].FQN)})
	requests := []*rpcRequest{
		{id: json.RawMessage("1"), method: "tools/list"},
		{id: json.RawMessage("2"), method: "tools/list", params: second},
	}
	w := &discard{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		for _, req := range requests {
			w.n = 0
			s.listTools(w, g, p, req, era{stateless: true})
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
