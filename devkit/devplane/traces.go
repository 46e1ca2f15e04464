package devplane

import (
	"context"
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
)

// garmdScope is the instrumentation scope of garmd's spans: a span of it
// with the server kind is a call's root on garmd's side.
const garmdScope = "github.com/garm-dev/garm/daemon"

// straggleWait is how long a call's tree waits, after garmd's server span
// ends, for the tool's span (which ends once its answer is sent).
const straggleWait = 250 * time.Millisecond

// newTracerProvider is the provider garmd and the in-process tools share
// with --traces: exporting over OTLP when the standard variables name an
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT and the rest), else printing a
// compact tree of each call's spans to w.
func newTracerProvider(ctx context.Context, w io.Writer) (*sdktrace.TracerProvider, error) {
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("garm-dev")), resource.WithFromEnv())
	if err != nil {
		return nil, err
	}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return sdktrace.NewTracerProvider(sdktrace.WithSyncer(&treePrinter{w: w, pending: map[trace.TraceID][]sdktrace.ReadOnlySpan{}}), sdktrace.WithResource(res)), nil
	}
	var exp sdktrace.SpanExporter
	if os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
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
	var walk func(parent trace.SpanID, indent string)
	walk = func(parent trace.SpanID, indent string) {
		kids := children[parent]
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].StartTime().Before(kids[j].StartTime()) })
		for i, s := range kids {
			branch, next := "├─ ", "│  "
			if i == len(kids)-1 {
				branch, next = "└─ ", "   "
			}
			fmt.Fprintf(&b, "%s%s%s %s%s\n", indent, branch, s.Name(), s.EndTime().Sub(s.StartTime()).Round(time.Microsecond), describe(s))
			walk(s.SpanContext().SpanID(), indent+next)
		}
	}
	walk(trace.SpanID{}, "")
	return b.String()
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
