package devplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/internal/loopback"
)

const (
	// rowsKept bounds how many ledger rows the dev endpoint remembers; the
	// oldest are forgotten first.
	rowsKept = 10000
	// maxRowWait bounds how long GET /ledger/<id>?wait= holds a request
	// for a row that has not landed yet.
	maxRowWait = 30 * time.Second
)

// Row is a ledger row as the dev endpoint answers it: what an author needs
// to see why a call ended as it did. Field names are the ledger's.
type Row struct {
	EventID          string  `json:"event_id"`
	Tool             string  `json:"tool"`
	Outcome          string  `json:"outcome"`
	Code             string  `json:"error_kind,omitempty"`
	Detail           string  `json:"error_detail,omitempty"`
	PrincipalSubject string  `json:"principal_subject,omitempty"`
	PrincipalActor   string  `json:"principal_actor,omitempty"`
	RedactionCount   uint32  `json:"redaction_count"`
	DisclosedCount   uint32  `json:"disclosed_count"`
	LatencyMs        float64 `json:"latency_ms"`
	Surface          string  `json:"surface,omitempty"`
}

func rowOf(e *ledgerv1.Event) Row {
	return Row{
		EventID: e.GetEventId(), Tool: e.GetTool(), Outcome: e.GetOutcome(),
		Code: e.GetErrorKind(), Detail: e.GetErrorDetail(),
		PrincipalSubject: e.GetPrincipalSubject(), PrincipalActor: e.GetPrincipalActor(),
		RedactionCount: e.GetRedactionCount(), DisclosedCount: e.GetDisclosedCount(),
		LatencyMs: e.GetLatencyMs(), Surface: e.GetSurface(),
	}
}

// rowIndex holds the latest ledger rows of this run by event id.
type rowIndex struct {
	mu     sync.Mutex
	byID   map[string]Row
	order  []string
	landed chan struct{} // closed and replaced whenever a row lands
}

func newRowIndex() *rowIndex {
	return &rowIndex{byID: map[string]Row{}, landed: make(chan struct{})}
}

func (x *rowIndex) add(e *ledgerv1.Event) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.byID[e.GetEventId()]; !ok {
		x.order = append(x.order, e.GetEventId())
	}
	x.byID[e.GetEventId()] = rowOf(e)
	for len(x.order) > rowsKept {
		delete(x.byID, x.order[0])
		x.order = x.order[1:]
	}
	close(x.landed)
	x.landed = make(chan struct{})
}

// wait answers the row of id once it has landed, or false when ctx ends
// first.
func (x *rowIndex) wait(ctx context.Context, id string) (Row, bool) {
	for {
		x.mu.Lock()
		row, ok := x.byID[id]
		landed := x.landed
		x.mu.Unlock()
		if ok {
			return row, true
		}
		select {
		case <-landed:
		case <-ctx.Done():
			return Row{}, false
		}
	}
}

// Route is a tool of the served catalogue and the route garmd serves it at.
type Route struct {
	Tool   string `json:"tool"`
	Method string `json:"method"`
}

// startDevEndpoint serves, on addr, GET /ledger/<event id>[?wait=<duration>]:
// the row as JSON, 404 when it has not landed (within wait); and GET
// /tools: every tool of the catalogue served with its route, whoever may
// see it, so that `garm call` can call a tool its persona may not see and
// show why it was refused. On a cluster it also answers POST
// /nodes/<n>/stop and /nodes/<n>/start (StopNode, StartNode); when the
// replicas are processes, POST /replicas/<n>/start (StartReplica). The endpoint
// exists only in the dev plane, on loopback; a deployment reads its ledger
// from the stream. It answers only behind the loopback guard and with the
// run's secret, which it writes to DevSecretFile: it tells why a call was
// refused and lists every tool, which an agent on the same machine must
// not learn by asking.
func (s *Plane) startDevEndpoint(addr string) error {
	if addr == "" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--dev-listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ledger/{id}", s.serveRow)
	mux.HandleFunc("GET /tools", s.serveTools)
	if len(s.bus.nodes) > 1 {
		mux.HandleFunc("POST /nodes/{n}/{action}", s.serveNode)
	}
	if s.opts.GarmdBinary != "" {
		mux.HandleFunc("POST /replicas/{n}/start", s.serveReplica)
	}
	s.urls.Dev = "http://" + l.Addr().String()
	secret, secretFile, err := writeDevSecret(s.urls.Dev)
	if err != nil {
		l.Close()
		return fmt.Errorf("the dev endpoint's secret: %w", err)
	}
	s.urls.DevSecretFile = secretFile
	s.devSrv = &http.Server{Handler: loopback.Guard(requireDevSecret(secret, mux)), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.devSrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.fail(fmt.Errorf("the dev endpoint stopped: %v", err))
		}
	}()
	return nil
}

func (s *Plane) serveRow(w http.ResponseWriter, r *http.Request) {
	wait := time.Duration(0)
	if text := r.URL.Query().Get("wait"); text != "" {
		d, err := time.ParseDuration(text)
		if err != nil || d < 0 {
			http.Error(w, "wait: not a duration", http.StatusBadRequest)
			return
		}
		wait = min(d, maxRowWait)
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	row, ok := s.rows.wait(ctx, r.PathValue("id"))
	if !ok {
		http.Error(w, "no ledger row with this event id (yet)", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(row)
}

func (s *Plane) serveTools(w http.ResponseWriter, _ *http.Request) {
	var routes []Route
	for _, t := range s.Catalogue().Artifact.Tools() {
		routes = append(routes, Route{Tool: t.FQN, Method: t.Method})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(routes)
}
