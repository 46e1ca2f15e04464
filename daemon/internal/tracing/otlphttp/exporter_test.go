package otlphttp

import (
	"context"
	"crypto/tls"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/garm-dev/garm/internal/testpki"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestTheVariablesSayWhereAndHow(t *testing.T) {
	t.Parallel()
	cfg, err := ConfigFromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://collector:4318/base",
		"OTEL_EXPORTER_OTLP_HEADERS":            "Authorization=Bearer%20abc , x-tenant = a",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":     "x-only-traces=1",
		"OTEL_EXPORTER_OTLP_TIMEOUT":            "2500",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
		"OTEL_EXPORTER_OTLP_COMPRESSION":        "none",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != "http://collector:4318/base/v1/traces" || cfg.Timeout != 2500*time.Millisecond || !cfg.Gzip || cfg.TLS != nil {
		t.Fatalf("%+v", cfg)
	}
	// The _TRACES_ form wins over the general one, whole.
	if cfg.Headers.Get("x-only-traces") != "1" || cfg.Headers.Get("Authorization") != "" {
		t.Fatalf("headers %v", cfg.Headers)
	}
	cfg, err = ConfigFromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":         "Authorization=Bearer%20abc , x-tenant = a",
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://ignored:4318",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector:4318/custom?x=1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.URL != "https://collector:4318/custom" || cfg.Headers.Get("Authorization") != "Bearer abc" || cfg.Headers.Get("X-Tenant") != "a" || cfg.Timeout != DefaultTimeout || cfg.Gzip {
		t.Fatalf("%+v", cfg)
	}
	cfg, err = ConfigFromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318"}))
	if err != nil || cfg.URL != "http://collector:4318/" {
		t.Fatalf("%+v %v", cfg, err)
	}
}

// TestAVariableItCannotReadIsRefusedWithoutItsValue: where the SDK would
// skip a value, garmd refuses to start, and the refusal names the
// variable but never repeats its value, which may be a credential.
func TestAVariableItCannotReadIsRefusedWithoutItsValue(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t"
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	base := "http://collector:4318"
	for _, tc := range []struct {
		vars map[string]string
		says string
	}{
		{map[string]string{}, "neither"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318/" + secret}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://" + secret}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http:///" + secret}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "Authorization " + secret}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=1,bad key=" + secret}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "a=" + secret + "%0d%0aInjected: 1"}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_HEADERS": "a=%zz" + secret}, "OTEL_EXPORTER_OTLP_HEADERS"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"}, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "absent")}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM}, "without OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": notPEM}, "without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": base, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": notPEM, "OTEL_EXPORTER_OTLP_CLIENT_KEY": notPEM}, "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
	} {
		_, err := ConfigFromEnv(env(tc.vars))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), dir) {
			t.Errorf("%v: %v, want a refusal naming %q without the value", tc.vars, err, tc.says)
		}
	}
}

// TestItSendsOverMutualTLSWithHeadersAndGzip: a receiver that requires
// a client certificate from the variables' authority gets the spans,
// compressed, with the variables' headers; without the client
// certificate the export fails.
func TestItSendsOverMutualTLSWithHeadersAndGzip(t *testing.T) {
	t.Parallel()
	p := testpki.New(t)
	// The receiver's handler, served over mutual TLS.
	r := newReceiver(t)
	srv := httptest.NewUnstartedServer(r.Config.Handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.Pair}, ClientCAs: p.Pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	vars := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    srv.URL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_HEADERS":            "authorization=Bearer%20token,x-tenant=bank",
		"OTEL_EXPORTER_OTLP_COMPRESSION":        "gzip",
		"OTEL_EXPORTER_OTLP_CERTIFICATE":        p.CA,
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": p.Cert,
		"OTEL_EXPORTER_OTLP_CLIENT_KEY":         p.Key,
	}
	cfg, err := ConfigFromEnv(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := New(cfg, "garmd/test")
	if err != nil {
		t.Fatal(err)
	}
	spans := randomSpans(rand.New(rand.NewPCG(1, 2)), 20)
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	got, _, h := r.last(t)
	want := sdkSent(t, spans)
	sortResources(got)
	sortResources(want)
	if !proto.Equal(got, want) {
		t.Fatal("the spans sent over TLS are not the SDK exporter's")
	}
	if h.Get("Content-Encoding") != "gzip" || h.Get("Authorization") != "Bearer token" || h.Get("X-Tenant") != "bank" ||
		h.Get("Content-Type") != "application/x-protobuf" || h.Get("User-Agent") != "garmd/test" {
		t.Fatalf("headers %v", h)
	}

	delete(vars, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	delete(vars, "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	cfg, err = ConfigFromEnv(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 2 * time.Second
	noCert, _ := New(cfg, "garmd/test")
	if err := noCert.ExportSpans(context.Background(), spans); err == nil {
		t.Fatal("an export without the client certificate succeeded")
	}
}

// TestItRetriesWhatTheSpecificationSaysAndNothingElse: 503 with
// Retry-After is tried again after it; 400 is not; a receiver that never
// answers is given up on at the timeout; an answer too long to read, a
// partial success and a redirect are errors.
func TestItRetriesWhatTheSpecificationSaysAndNothingElse(t *testing.T) {
	t.Parallel()
	spans := randomSpans(rand.New(rand.NewPCG(3, 4)), 3)
	serve := func(h http.HandlerFunc) (*Exporter, *atomic.Int32) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h(w, r) }))
		t.Cleanup(srv.Close)
		exp, err := New(Config{URL: srv.URL + TracesPath, Timeout: 3 * time.Second}, "garmd/test")
		if err != nil {
			t.Fatal(err)
		}
		return exp, &n
	}

	var first atomic.Bool
	exp, n := serve(func(w http.ResponseWriter, _ *http.Request) {
		if first.CompareAndSwap(false, true) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	start := time.Now()
	if err := exp.ExportSpans(context.Background(), spans); err != nil || n.Load() != 2 || time.Since(start) < time.Second {
		t.Fatalf("after a 503: %v, %d requests in %v", err, n.Load(), time.Since(start))
	}

	exp, n = serve(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	if err := exp.ExportSpans(context.Background(), spans); err == nil || n.Load() != 1 {
		t.Fatalf("after a 400: %v, %d requests", err, n.Load())
	}

	release := make(chan struct{})
	exp, _ = serve(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for the handler
	exp.cfg.Timeout = 300 * time.Millisecond
	start = time.Now()
	if err := exp.ExportSpans(context.Background(), spans); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a receiver that never answers: %v after %v", err, time.Since(start))
	}

	exp, _ = serve(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(make([]byte, maxResponse+1))
	})
	if err := exp.ExportSpans(context.Background(), spans); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("an answer too long: %v", err)
	}

	exp, _ = serve(func(w http.ResponseWriter, _ *http.Request) {
		b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(b)
	})
	if err := exp.ExportSpans(context.Background(), spans); err == nil || !strings.Contains(err.Error(), "rejected 2 spans") {
		t.Fatalf("a partial success: %v", err)
	}

	// A redirect is not followed: the spans and the headers stay off
	// the host it names.
	elsewhere := newReceiver(t)
	exp, n = serve(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+TracesPath, http.StatusTemporaryRedirect)
	})
	exp.cfg.Headers = http.Header{"X-Api-Key": {"secret"}}
	if err := exp.ExportSpans(context.Background(), spans); err == nil || n.Load() != 1 {
		t.Fatalf("a redirect: %v, %d requests", err, n.Load())
	}
	elsewhere.mu.Lock()
	followed := len(elsewhere.bodies)
	elsewhere.mu.Unlock()
	if followed != 0 {
		t.Fatal("the export followed a redirect to another host")
	}

	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err == nil {
		t.Fatal("an export after shutdown succeeded")
	}
}

// TestABatchTooLargeToKeepIsLetGo: the buffers an export reuses do not
// keep what one very large batch grew.
func TestABatchTooLargeToKeepIsLetGo(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	exp, err := New(Config{URL: r.URL + TracesPath, Gzip: true}, "garmd/test")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	big := randomSpans(rng, 600)
	if err := exp.ExportSpans(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	if cap(exp.enc.b) > maxKeptBuffer || exp.gz.Cap() > maxKeptBuffer {
		t.Fatalf("kept %d and %d bytes", cap(exp.enc.b), exp.gz.Cap())
	}
	small := randomSpans(rng, 2)
	if err := exp.ExportSpans(context.Background(), small); err != nil {
		t.Fatal(err)
	}
	if cap(exp.enc.b) == 0 {
		t.Fatal("a small batch's buffer was not kept")
	}
}

// TestExportsFromManyGoroutinesEachArriveWhole: the buffers an export
// reuses are one export's at a time, whoever calls.
func TestExportsFromManyGoroutinesEachArriveWhole(t *testing.T) {
	t.Parallel()
	r := newReceiver(t)
	exp, err := New(Config{URL: r.URL + TracesPath}, "garmd/test")
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 4, 10
	batches := make([][]sdktrace.ReadOnlySpan, goroutines)
	for i := range batches {
		batches[i] = randomSpans(rand.New(rand.NewPCG(uint64(i), 9)), 5+i)
	}
	errs := make(chan error, goroutines*each)
	for i := range goroutines {
		go func() {
			for range each {
				errs <- exp.ExportSpans(context.Background(), batches[i])
			}
		}()
	}
	for range goroutines * each {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := map[int]int{}
	for _, b := range r.bodies {
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		counts[n]++
	}
	for i := range goroutines {
		if counts[5+i] != each {
			t.Fatalf("batches by span count %v, want %d of each of 5–%d", counts, each, 4+goroutines)
		}
	}
}
