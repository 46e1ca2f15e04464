package garmd_test

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
)

// otlpSpan is one span as an OTLP receiver decoded it.
type otlpSpan struct {
	service, name, resource string
	traceID, spanID, parent string
}

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it decodes each
// export request as the protobuf ExportTraceServiceRequest it must be.
type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []otlpSpan
	bad   []string
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var export coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &export)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			r.bad = append(r.bad, req.Method+" "+req.URL.Path+" "+req.Header.Get("Content-Type"))
			http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
			return
		}
		for _, rs := range export.GetResourceSpans() {
			service, resource := "", ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.GetKey() == "service.name" {
					service = a.GetValue().GetStringValue()
				}
				resource += " " + a.GetKey() + "=" + a.GetValue().GetStringValue()
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					r.spans = append(r.spans, otlpSpan{
						service: service, name: s.GetName(), resource: resource,
						traceID: hex.EncodeToString(s.GetTraceId()), spanID: hex.EncodeToString(s.GetSpanId()),
						parent: hex.EncodeToString(s.GetParentSpanId()),
					})
				}
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *otlpReceiver) trace(id string) []otlpSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []otlpSpan
	for _, s := range r.spans {
		if s.traceID == id {
			out = append(out, s)
		}
	}
	return out
}

// buildCalcd builds the example calculator's service, a tool process of
// its own.
func buildCalcd(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "calcd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "../examples/calculator/cmd/calcd")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -o %s ../examples/calculator/cmd/calcd: %v\n%s", out, err, b)
	}
	return out
}

func TestTracesReachAnOTLPReceiverFromGarmdAndTheToolProcessInOneTrace(t *testing.T) {
	recv := startOTLPReceiver(t)
	calcd := buildCalcd(t)
	b := startBus(t)

	// The tool process, traced by the standard variables.
	cmd := exec.Command(calcd, "--nats", b.url)
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.url, "OTEL_BSP_SCHEDULE_DELAY=50")
	var calcdLog logBuffer
	cmd.Stderr = &calcdLog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})

	// garmd in this process, traced by the same variables: no provider in
	// its config.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.url)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	personas, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	id, err := idp.New(personas, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := id.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idpSrv.Close() })
	c, err := builder.FromRoots(context.Background(), "../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := garmd.DefaultConfig()
	cfg.Catalogue = filepath.Join(dir, "catalogue.binpb")
	writeFile(t, cfg.Catalogue, c.Bytes)
	cfg.HashKeyFile = filepath.Join(dir, "hash.key")
	writeFile(t, cfg.HashKeyFile, []byte("a test hash key of more than sixteen bytes\n"))
	cfg.NATS, cfg.Listen, cfg.AdminListen = b.url, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Issuers, cfg.JWKS = []string{id.Issuer()}, []string{idpSrv.JWKSURL()}
	cfg.Logger = slog.New(slog.DiscardHandler)
	ctx, stop := context.WithCancel(context.Background())
	d, err := garmd.New(ctx, cfg)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		stop()
		<-done
	}()

	token, err := id.Token("public", "")
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, client: &http.Client{Timeout: waitTimeout}, url: "http://" + d.Addr().String()}
	// calcd may still be starting: asked again until it answers.
	var caller callerTrace
	for i := byte(0); ; i++ {
		caller = newCallerTrace(0x40 + i)
		ans := s.post(addPath, token, `{"a": 40, "b": 2}`, "Traceparent", caller.header())
		if ans.status == http.StatusOK {
			break
		}
		if ans.status != http.StatusServiceUnavailable || i == 100 {
			t.Fatalf("%d %s\ncalcd:\n%s", ans.status, ans.body, calcdLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	want := caller.traceID.String()
	deadline := time.Now().Add(waitTimeout)
	var spans []otlpSpan
	for time.Now().Before(deadline) {
		// garmd's server and client spans (its default shape) and calcd's.
		if spans = recv.trace(want); len(spans) >= 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	byName := map[string]otlpSpan{}
	for _, s := range spans {
		byName[s.service+" "+s.name] = s
	}
	server, client, tool := byName["garmd execute_tool calc.v1.add"], byName["garmd request calc.v1.Calculator.Add"], byName["calcd calc.v1.add"]
	if server.spanID == "" || client.spanID == "" || tool.spanID == "" {
		t.Fatalf("the receiver has %d spans of trace %s, want garmd's server and client spans and calcd's: %+v\ncalcd:\n%s", len(spans), want, spans, calcdLog.String())
	}
	if server.parent != caller.spanID.String() || client.parent != server.spanID || tool.parent != client.spanID {
		t.Errorf("the spans do not chain caller -> garmd -> NATS request -> calcd: %+v", spans)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.bad) > 0 {
		t.Errorf("exports that were not OTLP/HTTP protobuf: %v", recv.bad)
	}
	if !strings.Contains(server.resource, "deployment.environment.name=test") || !strings.Contains(server.resource, "service.version=") {
		t.Errorf("garmd's resource does not carry OTEL_RESOURCE_ATTRIBUTES and its version: %s", server.resource)
	}
}

func TestGarmdFlushesItsSpansWhenItStops(t *testing.T) {
	recv := startOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.url)
	// Nothing is exported on the batcher's schedule during the test.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "600000")
	s := startStack(t)
	caller := newCallerTrace(0x70)
	if ans := s.post(addPath, s.token("public"), `{"a": 40, "b": 2}`, "Traceparent", caller.header()); ans.status != http.StatusOK {
		t.Fatalf("%d %s", ans.status, ans.body)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(recv.trace(caller.traceID.String())); n != 0 {
		t.Fatalf("%d spans exported before the flush: the test cannot tell a flush from the schedule", n)
	}
	s.shutdown()
	spans := recv.trace(caller.traceID.String())
	names := make([]string, len(spans))
	for i, sp := range spans {
		names[i] = sp.service + " " + sp.name
	}
	// The call's spans in garmd's default shape: the server span and the
	// NATS client span (docs/decisions/0143).
	if len(spans) != 2 || !slices.Contains(names, "garmd execute_tool calc.v1.add") || !slices.Contains(names, "garmd request calc.v1.Calculator.Add") {
		t.Fatalf("after garmd stopped the receiver holds %v, want garmd's two spans of the call", names)
	}
}
