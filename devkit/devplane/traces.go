package devplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// garmdScope is the instrumentation scope of garmd's spans: a span of it
// with the server kind is a call's root on garmd's side.
const garmdScope = "github.com/garm-dev/garm/daemon"

// straggleWait is how long a call's tree waits, after garmd's server span
// ends, for the tool's span (which ends once its answer is sent).
const straggleWait = 250 * time.Millisecond

// GarmdServiceName is service.name on garmd's spans in the dev plane, as
// garmd names itself when it builds its own provider.
const GarmdServiceName = "garmd"

// ToolsServiceName is service.name on a span of an in-process tool service
// that no service's proto package claims; each service's own spans carry
// its Service.Name.
const ToolsServiceName = "garm-dev-tools"

// traceExport is --traces: one exporter, and one provider per service.name
// feeding it — garmd's and each in-process tool service's — so a trace
// tells the tool's spans from garmd's (decision 0088).
type traceExport struct {
	exporter sdktrace.SpanExporter
	// batch is whether spans are batched (OTLP) rather than handed over as
	// each ends (the tree printer).
	batch bool

	mu        sync.Mutex
	providers []*sdktrace.TracerProvider
}

// newTraceExport exports over OTLP when the standard variables name an
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT and the rest), else prints a
// compact tree of each call's spans to w.
func newTraceExport(ctx context.Context, w io.Writer) (*traceExport, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return &traceExport{exporter: &treePrinter{w: w, pending: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}}, nil
	}
	var exp sdktrace.SpanExporter
	var err error
	if os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &traceExport{exporter: exp, batch: true}, nil
}

// provider is a new provider of spans whose resource is the environment's
// (OTEL_RESOURCE_ATTRIBUTES) with service.name set to name: OTEL_SERVICE_NAME
// would give every part of the plane the same one.
func (x *traceExport) provider(ctx context.Context, name string) (*sdktrace.TracerProvider, error) {
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(semconv.ServiceName(name)))
	if err != nil {
		return nil, err
	}
	exp := sharedExporter{x.exporter}
	export := sdktrace.WithSyncer(exp)
	if x.batch {
		export = sdktrace.WithBatcher(exp)
	}
	tp := sdktrace.NewTracerProvider(export, sdktrace.WithResource(res))
	x.mu.Lock()
	x.providers = append(x.providers, tp)
	x.mu.Unlock()
	return tp, nil
}

// shutdown flushes and stops every provider, then the exporter they share.
func (x *traceExport) shutdown(ctx context.Context) error {
	x.mu.Lock()
	providers := x.providers
	x.providers = nil
	x.mu.Unlock()
	var errs []error
	for _, tp := range providers {
		errs = append(errs, tp.Shutdown(ctx))
	}
	return errors.Join(append(errs, x.exporter.Shutdown(ctx))...)
}

// sharedExporter is the exporter as one of several providers holds it: a
// provider's shutdown leaves it running for the others.
type sharedExporter struct{ sdktrace.SpanExporter }

func (sharedExporter) Shutdown(context.Context) error { return nil }

// toolTracers is the tracer provider the in-process tool services are
// given: it starts each span on the provider of the service whose proto
// package the span's name (the tool's name, as garmtool names its server
// span) belongs to, so each service's spans carry its own service.name.
// The services are made before the plane knows their packages, so the
// providers are set afterwards (route).
type toolTracers struct {
	embedded.TracerProvider
	mu        sync.RWMutex
	byPackage map[string]trace.TracerProvider
	// fallback takes a span no package claims.
	fallback trace.TracerProvider
}

// route sends the spans of tools in pkg to tp.
func (p *toolTracers) route(pkg string, tp trace.TracerProvider) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byPackage == nil {
		p.byPackage = map[string]trace.TracerProvider{}
	}
	p.byPackage[pkg] = tp
}

// providerOf is the provider of the longest package spanName is in.
func (p *toolTracers) providerOf(spanName string) trace.TracerProvider {
	p.mu.RLock()
	defer p.mu.RUnlock()
	best, tp := -1, p.fallback
	for pkg, candidate := range p.byPackage {
		if len(pkg) > best && strings.HasPrefix(spanName, pkg+".") {
			best, tp = len(pkg), candidate
		}
	}
	return tp
}

func (p *toolTracers) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &toolTracer{p: p, name: name, opts: opts}
}

type toolTracer struct {
	embedded.Tracer
	p    *toolTracers
	name string
	opts []trace.TracerOption
}

func (t *toolTracer) Start(ctx context.Context, spanName string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.p.providerOf(spanName).Tracer(t.name, t.opts...).Start(ctx, spanName, opts...)
}

// treePrinter prints each call's spans as one indented tree, once garmd's
// server span for it has ended.
type treePrinter struct {
	w       io.Writer
	mu      sync.Mutex
	pending map[trace.TraceID][]sdktrace.ReadOnlySpan
	wg      sync.WaitGroup
}

func (p *treePrinter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range spans {
		id := s.SpanContext().TraceID()
		p.pending[id] = append(p.pending[id], s)
		if s.InstrumentationScope().Name == garmdScope && s.SpanKind() == trace.SpanKindServer {
			p.wg.Add(1)
			time.AfterFunc(straggleWait, func() {
				defer p.wg.Done()
				p.print(id)
			})
		}
	}
	return nil
}

// Shutdown prints what is waiting.
func (p *treePrinter) Shutdown(context.Context) error {
	p.wg.Wait()
	p.mu.Lock()
	ids := make([]trace.TraceID, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		p.print(id)
	}
	return nil
}

func (p *treePrinter) print(id trace.TraceID) {
	p.mu.Lock()
	spans := p.pending[id]
	delete(p.pending, id)
	p.mu.Unlock()
	if len(spans) > 0 {
		fmt.Fprint(p.w, SpanTree(spans))
	}
}

// SpanTree renders one trace's spans: a header line with the trace id,
// then each span indented under its parent, in the order they started,
// with its duration and what it says about the call.
func SpanTree(spans []sdktrace.ReadOnlySpan) string {
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		parent := s.Parent().SpanID()
		if !ids[parent] {
			parent = trace.SpanID{}
		}
		children[parent] = append(children[parent], s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s\n", spans[0].SpanContext().TraceID())
	var walk func(parent trace.SpanID, indent, service string)
	walk = func(parent trace.SpanID, indent, service string) {
		kids := children[parent]
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].StartTime().Before(kids[j].StartTime()) })
		for i, s := range kids {
			branch, next := "├─ ", "│  "
			if i == len(kids)-1 {
				branch, next = "└─ ", "   "
			}
			fmt.Fprintf(&b, "%s%s%s %s%s%s\n", indent, branch, s.Name(), s.EndTime().Sub(s.StartTime()).Round(time.Microsecond), describe(s), serviceChange(s, service))
			walk(s.SpanContext().SpanID(), indent+next, serviceOf(s))
		}
	}
	walk(trace.SpanID{}, "", "")
	return b.String()
}

// serviceOf is the service.name of the span's resource.
func serviceOf(s sdktrace.ReadOnlySpan) string {
	if v, ok := s.Resource().Set().Value(semconv.ServiceNameKey); ok {
		return v.AsString()
	}
	return ""
}

// serviceChange names the span's service where it is not its parent's:
// the tree shows where a call leaves garmd.
func serviceChange(s sdktrace.ReadOnlySpan, parent string) string {
	if name := serviceOf(s); name != parent {
		return "  [" + name + "]"
	}
	return ""
}

// shown are the attributes a tree line shows, in this order.
var shown = []attribute.Key{"garm.outcome", "error.type", "garm.authn.token_cache_hit", "garm.tool.refusal_code", "garm.event_id"}

func describe(s sdktrace.ReadOnlySpan) string {
	var parts []string
	for _, k := range shown {
		for _, kv := range s.Attributes() {
			if kv.Key == k {
				parts = append(parts, string(k[strings.LastIndexByte(string(k), '.')+1:])+"="+kv.Value.Emit())
			}
		}
	}
	if s.Status().Code == codes.Error && len(parts) == 0 {
		parts = append(parts, "error")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, " ")
}
