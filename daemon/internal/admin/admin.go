package admin

import (
	"io"
	"log/slog"
	"net/http"
	"sync"
)

// The paths served; every other path is 404.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
	MetricsPath = "/metrics"
)

// Bodies of the two probes when all is well; a degraded readiness body is
// DegradedPrefix and the reason.
const (
	AliveBody      = "ok"
	ReadyBody      = "ready"
	DegradedPrefix = "degraded: "
)

// notReadyUnknown is the reason given when no Ready function was wired, or
// it failed without saying why: an unknown readiness is not readiness.
const notReadyUnknown = "readiness is not known"

// Config is what the admin handler serves.
type Config struct {
	// Ready reports whether garmd can serve calls: nil when it can, else an
	// error whose message is a static sentence saying why not. Nil Ready
	// means never ready.
	Ready func() error
	// Degraded says, while garmd is ready, what it cannot fully do: "" when
	// nothing, else a static sentence. A degraded garmd is still ready
	// (200): some tools refuse or fall back, and the others serve. Nil
	// means never degraded.
	Degraded func() string
	// Detail is added, on a line of its own, to a ready (or degraded)
	// answer: what garmd serves, e.g. the signed catalogue's version and
	// signers. "" or nil adds nothing. Like the reasons, it is served to
	// anyone who can reach the listener: operator-facing facts only.
	Detail func() string
	// Metrics serves /metrics. Nil means /metrics is 404 like any other
	// path not served.
	Metrics http.Handler
	// Logger is told when readiness changes. Nil discards.
	Logger *slog.Logger
}

// Handler serves /healthz, /readyz and /metrics, and nothing else.
func Handler(c Config) http.Handler {
	h := &handler{ready: c.Ready, degraded: c.Degraded, detail: c.Detail, metrics: c.Metrics, log: c.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

type handler struct {
	ready    func() error
	degraded func() string
	detail   func() string
	metrics  http.Handler
	log      *slog.Logger

	mu         sync.Mutex
	probed     bool
	lastReason string // "" when the last probe found garmd ready
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == HealthzPath:
		if allowed(w, r, true) {
			writeText(w, http.StatusOK, AliveBody)
		}
	case r.URL.Path == ReadyzPath:
		if allowed(w, r, true) {
			h.serveReadiness(w)
		}
	case r.URL.Path == MetricsPath && h.metrics != nil:
		if allowed(w, r, false) {
			h.metrics.ServeHTTP(w, r)
		}
	default:
		writeText(w, http.StatusNotFound, "not found")
	}
}

func (h *handler) serveReadiness(w http.ResponseWriter) {
	reason := notReadyUnknown
	if h.ready != nil {
		if err := h.ready(); err == nil {
			reason = ""
		} else if msg := err.Error(); msg != "" {
			reason = msg
		}
	}
	if reason != "" {
		h.noteChange(reason, false)
		writeText(w, http.StatusServiceUnavailable, reason)
		return
	}
	if h.degraded != nil {
		if why := h.degraded(); why != "" {
			h.noteChange(DegradedPrefix+why, true)
			writeText(w, http.StatusOK, h.withDetail(DegradedPrefix+why))
			return
		}
	}
	h.noteChange("", true)
	writeText(w, http.StatusOK, h.withDetail(ReadyBody))
}

// noteChange logs readiness when it differs from the last probe's, so a
// probe every few seconds does not become a log line every few seconds.
func (h *handler) noteChange(reason string, ready bool) {
	h.mu.Lock()
	changed := !h.probed || reason != h.lastReason
	h.probed, h.lastReason = true, reason
	h.mu.Unlock()
	if !changed {
		return
	}
	switch {
	case reason == "":
		h.log.Info("garmd is ready")
	case ready:
		h.log.Warn("garmd is ready, degraded", "reason", reason)
	default:
		h.log.Warn("garmd is not ready", "reason", reason)
	}
}

// allowed answers 405 with Allow unless r's method is GET, or HEAD when head
// is set. /metrics takes no HEAD: it would gather every series to send none.
func allowed(w http.ResponseWriter, r *http.Request, head bool) bool {
	if r.Method == http.MethodGet || (head && r.Method == http.MethodHead) {
		return true
	}
	allow := http.MethodGet
	if head {
		allow += ", " + http.MethodHead
	}
	w.Header().Set("Allow", allow)
	writeText(w, http.StatusMethodNotAllowed, "method not allowed")
	return false
}

func writeText(w http.ResponseWriter, status int, body string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// withDetail adds Detail's line to a ready body.
func (h *handler) withDetail(body string) string {
	if h.detail == nil {
		return body
	}
	if d := h.detail(); d != "" {
		return body + "\n" + d
	}
	return body
}
