package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Exporter sends spans to an OTLP/HTTP receiver as protobuf. It is an
// sdktrace.SpanExporter: what it sends is what the SDK's otlptracehttp
// exporter sends, written straight from the spans into a buffer the next
// export reuses rather than built as generated messages and marshalled.
type Exporter struct {
	cfg       Config
	client    *http.Client
	userAgent string
	stopped   atomic.Bool

	// mu holds one export at a time: the buffers are reused.
	mu  sync.Mutex
	enc batch
	gz  bytes.Buffer
	gzw *gzip.Writer
}

// maxKeptBuffer is the most an export's buffers keep for the next one; a
// larger batch's are let go.
const maxKeptBuffer = 4 << 20

// maxResponse bounds what is read of a receiver's answer.
const maxResponse = 64 << 10

// New is an Exporter sending as cfg says; userAgent names the sender.
func New(cfg Config, userAgent string) (*Exporter, error) {
	if cfg.URL == "" {
		return nil, errors.New("otlphttp: no URL")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		transport.TLSClientConfig = cfg.TLS.Clone()
	}
	return &Exporter{
		cfg: cfg,
		// A redirect is not followed: it would send the spans, and the
		// headers the operator meant for the receiver (a credential,
		// often), to wherever the answer names. It is a failed export.
		client: &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		userAgent: userAgent,
	}, nil
}

var errStopped = errors.New("otlphttp: the exporter is shut down")

// ExportSpans sends spans in one request, retrying as the specification
// says (429, 502, 503, 504 and a connection's temporary failure, after
// Retry-After when the receiver gives one, else a growing, jittered
// delay) until the request succeeds, fails otherwise, or Config.Timeout
// or ctx ends. A receiver's partial success is an error naming how many
// spans it rejected.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return errStopped
	}
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	body := e.enc.request(spans)
	defer e.trim()
	if e.cfg.Gzip {
		var err error
		if body, err = e.compress(body); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		wait, err := e.send(ctx, body)
		if err == nil || wait < 0 {
			return err
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// send posts body once. A retryable failure comes with how long to wait
// before the next try (0: the backoff's choice); any other, with -1.
func (e *Exporter) send(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range e.cfg.Headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", e.userAgent)
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		// The receiver could not be reached or the connection broke:
		// worth another try while time remains.
		return 0, err
	}
	defer resp.Body.Close()
	answer, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		if readErr != nil {
			return -1, readErr
		}
		if len(answer) > maxResponse {
			return -1, errors.New("otlphttp: the receiver's answer is too long")
		}
		return -1, partialSuccess(resp.Header.Get("Content-Type"), answer)
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("otlphttp: the receiver answered %s", resp.Status)
	default:
		return -1, fmt.Errorf("otlphttp: the receiver answered %s", resp.Status)
	}
}

// partialSuccess is the error a receiver's answer reports, if any.
func partialSuccess(contentType string, answer []byte) error {
	if len(answer) == 0 || contentType != "application/x-protobuf" {
		return nil
	}
	var resp coltracepb.ExportTraceServiceResponse
	if err := proto.Unmarshal(answer, &resp); err != nil {
		return fmt.Errorf("otlphttp: the receiver's answer: %w", err)
	}
	if ps := resp.GetPartialSuccess(); ps != nil && (ps.GetRejectedSpans() != 0 || ps.GetErrorMessage() != "") {
		return fmt.Errorf("otlphttp: the receiver rejected %d spans: %s", ps.GetRejectedSpans(), ps.GetErrorMessage())
	}
	return nil
}

// retryAfter is the wait a Retry-After header of whole seconds asks for,
// or 0 when it asks for none the exporter reads.
func retryAfter(v string) time.Duration {
	s, err := strconv.ParseInt(v, 10, 64)
	if err != nil || s <= 0 {
		return 0
	}
	return time.Duration(min(s, int64(maxBackoff/time.Second))) * time.Second
}

// The backoff's bounds, the SDK's.
const (
	firstBackoff = 5 * time.Second
	maxBackoff   = 30 * time.Second
)

// backoff is the wait before the try after attempt: 5 s growing by half
// each time to 30 s, each within half of its value either way.
func backoff(attempt int) time.Duration {
	d := float64(firstBackoff)
	for range attempt {
		d *= 1.5
	}
	d = min(d, float64(maxBackoff))
	return time.Duration(d * (0.5 + rand.Float64()))
}

func (e *Exporter) compress(body []byte) ([]byte, error) {
	e.gz.Reset()
	if e.gzw == nil {
		e.gzw = gzip.NewWriter(&e.gz)
	} else {
		e.gzw.Reset(&e.gz)
	}
	if _, err := e.gzw.Write(body); err != nil {
		return nil, err
	}
	if err := e.gzw.Close(); err != nil {
		return nil, err
	}
	return e.gz.Bytes(), nil
}

// trim lets go of buffers a large batch grew.
func (e *Exporter) trim() {
	if cap(e.enc.b) > maxKeptBuffer {
		e.enc.b = nil
	}
	if e.gz.Cap() > maxKeptBuffer {
		e.gz = bytes.Buffer{}
	}
}

// Shutdown stops the exporter: later exports fail. It waits for none in
// flight beyond ctx.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	done := make(chan struct{})
	go func() {
		e.mu.Lock()
		e.client.CloseIdleConnections()
		e.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ sdktrace.SpanExporter = (*Exporter)(nil)
