package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// otlpSink is an OTLP/HTTP receiver on loopback that takes every export
// and keeps nothing: what a traced garmd exports to, so that a run
// measures what tracing costs garmd (its spans, their encoding and their
// posting), not what a collector costs.
type otlpSink struct {
	srv     *http.Server
	url     string
	exports atomic.Int64
	bytes   atomic.Int64
}

func startOTLPSink() (*otlpSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &otlpSink{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, 64<<20))
		s.exports.Add(1)
		s.bytes.Add(n)
		// An empty ExportTraceServiceResponse: every span accepted.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return s, nil
}

func (s *otlpSink) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// droppedSpans is the compared garmd's garm_spans_dropped_total line, read
// from its /metrics at url.
func droppedSpans(ctx context.Context, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "spans dropped: " + err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "spans dropped: " + err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "spans dropped: " + err.Error()
	}
	for line := range strings.SplitSeq(string(body), "\n") {
		if strings.HasPrefix(line, "garm_spans_dropped_total") {
			return "compared garmd: " + line
		}
	}
	return "compared garmd: no garm_spans_dropped_total on /metrics"
}
