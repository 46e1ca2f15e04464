package keysettest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a JWKS endpoint on a loopback httptest server. It counts the
// requests it receives and serves whatever it was last told to.
type Server struct {
	// URL is where the set is served.
	URL string

	srv  *httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	status int
	body   []byte
	hold   chan struct{}
	// closed ends every held request when the server closes.
	closed    chan struct{}
	closeOnce sync.Once
	// arrived receives once per request, without blocking, so a test can
	// wait for a fetch to reach the endpoint.
	arrived chan struct{}
}

// NewServer serves keys as a JWKS until the test ends.
func NewServer(t testing.TB, keys ...*Key) *Server {
	t.Helper()
	s := &Server{status: http.StatusOK, arrived: make(chan struct{}, 64), closed: make(chan struct{})}
	s.Publish(t, keys...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/jwks.json"
	t.Cleanup(s.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-s.closed:
			http.Error(w, "closing", http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	status, body := s.status, s.body
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// Close stops the server; it is called when the test ends.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closed) })
	s.srv.Close()
}

// Publish serves keys from now on, with status 200.
func (s *Server) Publish(t testing.TB, keys ...*Key) {
	t.Helper()
	set := struct {
		Keys []json.RawMessage `json:"keys"`
	}{Keys: []json.RawMessage{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.JWK(t))
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(http.StatusOK, b)
}

// Serve answers every request with status and body from now on.
func (s *Server) Serve(status int, body []byte) {
	s.mu.Lock()
	s.status, s.body = status, body
	s.mu.Unlock()
}

// Hold makes requests wait until the returned release is called (or the
// server closes). Release is idempotent.
func (s *Server) Hold() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold = ch
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.hold == ch {
				s.hold = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Arrived receives (at least) once per request that reached the server.
func (s *Server) Arrived() <-chan struct{} { return s.arrived }

// Hits is the number of requests the server has received.
func (s *Server) Hits() int64 { return s.hits.Load() }
