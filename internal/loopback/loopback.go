package loopback

import (
	"net"
	"net/http"
	"strings"
)

// The fixed bodies of the two refusals: nothing the request sent is repeated.
const (
	refusedHost   = "Forbidden: this listener answers only requests addressed to a loopback host (127.0.0.1, [::1] or localhost).\n"
	refusedOrigin = "Forbidden: this listener refuses a change requested by another origin.\n"
)

// HostAllowed says whether host, a Host header (host or host:port), names loopback: a literal
// IP in 127.0.0.0/8, ::1 (bracketed when a port follows), or "localhost" in any case.
func HostAllowed(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	// A name never parses as an IP, so no name but localhost passes.
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Guard serves next only to a request addressed to a loopback host ([HostAllowed]) and, when
// its method changes state, not sent cross-origin by a browser; it refuses anything else with
// 403 and a fixed body.
func Guard(next http.Handler) http.Handler {
	origins := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !HostAllowed(r.Host) {
			refuse(w, refusedHost)
			return
		}
		if origins.Check(r) != nil {
			refuse(w, refusedOrigin)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(body))
}
