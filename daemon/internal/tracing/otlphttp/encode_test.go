package otlphttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP receiver on loopback that keeps each
// request's body, decompressed, and its headers.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) last(t *testing.T) (*coltracepb.ExportTraceServiceRequest, []byte, http.Header) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) == 0 {
		t.Fatal("the receiver got no request")
	}
	b := r.bodies[len(r.bodies)-1]
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("the request does not decode: %v", err)
	}
	return &req, b, r.headers[len(r.headers)-1]
}

// sdkSent is the request the SDK's OTLP/HTTP exporter sends for spans.
func sdkSent(t *testing.T, spans []sdktrace.ReadOnlySpan) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	r := newReceiver(t)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(r.URL+TracesPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	req, _, _ := r.last(t)
	return req
}

// sent is the request an Exporter sends for spans, and its bytes.
func sent(t *testing.T, cfg Config, spans []sdktrace.ReadOnlySpan) (*coltracepb.ExportTraceServiceRequest, []byte, http.Header) {
	t.Helper()
	r := newReceiver(t)
	cfg.URL = r.URL + TracesPath
	exp, err := New(cfg, "garmd-test")
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	return r.last(t)
}

// sortResources orders a request's resources by their encoding: the
// SDK's exporter sends them in a map's order.
func sortResources(req *coltracepb.ExportTraceServiceRequest) {
	key := func(rs *tracepb.ResourceSpans) []byte {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(rs.GetResource())
		return b
	}
	slices.SortStableFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int { return bytes.Compare(key(a), key(b)) })
}

// randomSpans are n spans of every shape a span can take: two resources
// and three scopes interleaved, every attribute type (nested slices and
// maps, empty values, strings long enough to need a length of three
// bytes), events, links, remote and local parents, each status, trace
// states and dropped counts.
func randomSpans(rng *rand.Rand, n int) []sdktrace.ReadOnlySpan {
	resources := []*resource.Resource{
		resource.NewWithAttributes("https://opentelemetry.io/schemas/1.43.0", attribute.String("service.name", "garmd"), attribute.String("service.version", "v1")),
		resource.NewSchemaless(attribute.String("service.name", "other"), attribute.Int64("replica", 3)),
	}
	scopes := []instrumentation.Scope{
		{Name: "github.com/garm-dev/garm/daemon", Version: "v1", SchemaURL: "https://opentelemetry.io/schemas/1.43.0"},
		{Name: "nats", Attributes: attribute.NewSet(attribute.Bool("wrapped", true))},
		{},
	}
	id := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	spanContext := func(remote bool) trace.SpanContext {
		var tid trace.TraceID
		var sid trace.SpanID
		copy(tid[:], id(16))
		copy(sid[:], id(8))
		cfg := trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(rng.IntN(2)), Remote: remote}
		if rng.IntN(4) == 0 {
			ts, _ := trace.ParseTraceState("garm=t" + fmt.Sprint(rng.IntN(100)) + ",other=x")
			cfg.TraceState = ts
		}
		return trace.NewSpanContext(cfg)
	}
	var out []sdktrace.ReadOnlySpan
	for range n {
		start := time.Unix(1_700_000_000+int64(rng.IntN(1000)), int64(rng.IntN(1e9)))
		stub := tracetest.SpanStub{
			Name:                   fmt.Sprintf("execute_tool calc.v1.add%d", rng.IntN(3)),
			SpanContext:            spanContext(false),
			SpanKind:               trace.SpanKind(rng.IntN(7)),
			StartTime:              start,
			EndTime:                start.Add(time.Duration(rng.IntN(1e6))),
			Attributes:             randomAttributes(rng, rng.IntN(14), 2),
			DroppedAttributes:      rng.IntN(2) * rng.IntN(5),
			DroppedEvents:          rng.IntN(2) * rng.IntN(5),
			DroppedLinks:           rng.IntN(2) * rng.IntN(5),
			ChildSpanCount:         rng.IntN(3),
			Resource:               resources[rng.IntN(len(resources))],
			InstrumentationScope:   scopes[rng.IntN(len(scopes))],
			InstrumentationLibrary: instrumentation.Library{},
		}
		stub.InstrumentationLibrary = stub.InstrumentationScope
		switch rng.IntN(3) {
		case 1:
			stub.Parent = spanContext(false)
		case 2:
			stub.Parent = spanContext(true)
		}
		switch rng.IntN(3) {
		case 1:
			stub.Status = sdktrace.Status{Code: codes.Ok}
		case 2:
			stub.Status = sdktrace.Status{Code: codes.Error, Description: "invalid_input"}
		}
		for range rng.IntN(3) {
			stub.Events = append(stub.Events, sdktrace.Event{Name: "step", Time: start.Add(time.Microsecond), Attributes: randomAttributes(rng, rng.IntN(3), 1), DroppedAttributeCount: rng.IntN(2)})
		}
		for range rng.IntN(3) {
			stub.Links = append(stub.Links, sdktrace.Link{SpanContext: spanContext(rng.IntN(2) == 0), Attributes: randomAttributes(rng, rng.IntN(3), 1), DroppedAttributeCount: rng.IntN(2)})
		}
		out = append(out, stub.Snapshot())
	}
	return out
}

func randomAttributes(rng *rand.Rand, n, depth int) []attribute.KeyValue {
	var out []attribute.KeyValue
	for i := range n {
		out = append(out, attribute.KeyValue{Key: attribute.Key(fmt.Sprintf("garm.k%d", i)), Value: randomValue(rng, depth)})
	}
	return out
}

func randomValue(rng *rand.Rand, depth int) attribute.Value {
	str := func() string {
		switch rng.IntN(8) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("ü", 10_000+rng.IntN(30_000))
		}
		return fmt.Sprintf("v%d", rng.IntN(1000))
	}
	kinds := 10
	if depth > 0 {
		kinds = 12
	}
	switch rng.IntN(kinds) {
	case 0:
		return attribute.Value{}
	case 1:
		return attribute.BoolValue(rng.IntN(2) == 0)
	case 2:
		return attribute.Int64Value(rng.Int64N(1<<40) - 1<<39)
	case 3:
		return attribute.Float64Value(rng.NormFloat64())
	case 4:
		return attribute.StringValue(str())
	case 5:
		return attribute.BoolSliceValue([]bool{true, false, rng.IntN(2) == 0}[:rng.IntN(4)])
	case 6:
		return attribute.Int64SliceValue([]int64{0, -1, rng.Int64()}[:rng.IntN(4)])
	case 7:
		return attribute.Float64SliceValue([]float64{0, 1.5, rng.Float64()}[:rng.IntN(4)])
	case 8:
		return attribute.StringSliceValue([]string{"", str(), str()}[:rng.IntN(4)])
	case 9:
		return attribute.ByteSliceValue([]byte(str()))
	case 10:
		var vs []attribute.Value
		for range rng.IntN(4) {
			vs = append(vs, randomValue(rng, depth-1))
		}
		return attribute.SliceValue(vs...)
	default:
		return attribute.MapValue(randomAttributes(rng, rng.IntN(4), depth-1)...)
	}
}

// TestTheEncodingIsTheSDKExportersMessage sends random batches through
// the SDK's OTLP/HTTP exporter and through an Exporter, and holds the two
// requests equal, message for message; with one resource and one scope,
// byte for byte.
func TestTheEncodingIsTheSDKExportersMessage(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 37))
		spans := randomSpans(rng, 1+rng.IntN(40))
		want := sdkSent(t, spans)
		got, _, _ := sent(t, Config{}, spans)
		sortResources(want)
		sortResources(got)
		if !proto.Equal(want, got) {
			t.Fatalf("seed %d: the requests differ\nSDK's:\n%v\nExporter's:\n%v", seed, prototext.Format(want), prototext.Format(got))
		}
	}
}

// TestOneResourceAndScopeIsTheSDKExportersBytes: with one resource and
// one scope, garmd's case, the bytes are the SDK exporter's.
func TestOneResourceAndScopeIsTheSDKExportersBytes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	spans := randomSpans(rng, 60)
	for i, s := range spans {
		stub := tracetest.SpanStubFromReadOnlySpan(s)
		stub.Resource = spans[0].Resource()
		stub.InstrumentationScope = spans[0].InstrumentationScope()
		stub.InstrumentationLibrary = stub.InstrumentationScope
		spans[i] = stub.Snapshot()
	}
	want, err := proto.Marshal(sdkSent(t, spans))
	if err != nil {
		t.Fatal(err)
	}
	_, got, _ := sent(t, Config{}, spans)
	if !bytes.Equal(want, got) {
		t.Fatalf("the bytes differ: %d against the SDK's %d", len(got), len(want))
	}
}

// FuzzTheEncodingIsTheSDKExportersMessage is the differential test with
// the batch drawn from the fuzzer's seed: go test -fuzz
// FuzzTheEncodingIsTheSDKExportersMessage ./daemon/internal/tracing/otlphttp/
func FuzzTheEncodingIsTheSDKExportersMessage(f *testing.F) {
	for _, seed := range []uint64{0, 1, 37, 1 << 40} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, seed uint64, n uint8) {
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		spans := randomSpans(rng, 1+int(n)%32)
		want := sdkSent(t, spans)
		got, _, _ := sent(t, Config{}, spans)
		sortResources(want)
		sortResources(got)
		if !proto.Equal(want, got) {
			t.Fatalf("seed %d, %d: the requests differ", seed, n)
		}
	})
}
