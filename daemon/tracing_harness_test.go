package garmd_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	garmd "github.com/garm-dev/garm/daemon"
)

// traces is the SDK's in-memory exporter behind a provider that garmd and
// the stack's tool services share: every span of a call, from both sides
// of the hop, lands here as it ends.
type traces struct {
	exporter *tracetest.InMemoryExporter
	provider *sdktrace.TracerProvider
}

func newTraces(t testing.TB) *traces {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return &traces{exporter: exp, provider: tp}
}

// withTracing traces into tr with a span per step (--trace-steps): the
// span tree of docs/decisions/0060, which these tests hold.
func withTracing(tr *traces) stackOption {
	return func(c *garmd.Config) { c.TracerProvider, c.TraceSteps = tr.provider, true }
}

// withDefaultTracing traces into tr in garmd's default shape: the server
// span and the NATS client span, each step's time on the server span
// (docs/decisions/0143).
func withDefaultTracing(tr *traces) stackOption {
	return func(c *garmd.Config) { c.TracerProvider = tr.provider }
}

// callerTrace is a caller's traceparent: the trace every call of the test
// belongs to, with a parent span of its own.
type callerTrace struct {
	traceID trace.TraceID
	spanID  trace.SpanID
}

func newCallerTrace(n byte) callerTrace {
	var c callerTrace
	for i := range c.traceID {
		c.traceID[i] = 0xa0 + n + byte(i)
	}
	for i := range c.spanID {
		c.spanID[i] = 0xb0 + n + byte(i)
	}
	return c
}

func (c callerTrace) header() string {
	return "00-" + c.traceID.String() + "-" + c.spanID.String() + "-01"
}

// spans waits until the trace holds want spans and no more arrive, and
// returns them.
func (tr *traces) spans(t testing.TB, id trace.TraceID, want int) []tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var got []tracetest.SpanStub
	for time.Now().Before(deadline) {
		got = got[:0]
		for _, s := range tr.exporter.GetSpans() {
			if s.SpanContext.TraceID() == id {
				got = append(got, s)
			}
		}
		if len(got) >= want {
			// A little longer: a span that should not be there has its
			// chance to arrive.
			time.Sleep(50 * time.Millisecond)
			n := 0
			for _, s := range tr.exporter.GetSpans() {
				if s.SpanContext.TraceID() == id {
					n++
				}
			}
			if n == len(got) {
				return got
			}
			continue
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("trace %s: %d spans within %s, want %d:\n%s", id, len(got), waitTimeout, want, renderTree(got, trace.SpanID{}))
	return nil
}

// shownKeys are the attributes a rendered tree shows with their value;
// eventual values (ids, digests, versions) are shown as "*" when set.
var shownKeys = map[attribute.Key]bool{
	"garm.surface": true, "gen_ai.operation.name": true, "gen_ai.tool.name": true, "mcp.method.name": true,
	"mcp.protocol.version": true, "garm.outcome": true, "error.type": true, "garm.authn.token_cache_hit": true,
	"messaging.system": true, "messaging.destination.name": true, "messaging.operation.type": true,
	"messaging.operation.name": true, "garm.tool.fqn": true, "garm.tool.refusal_code": true,
}

var starredKeys = map[attribute.Key]bool{"garm.event_id": true, "garm.catalogue.digest": true, "garm.version": true}

// renderTree draws the spans under root (the zero id: the spans whose
// parent is not among them) one per line, children indented under their
// parent in the order they started: "name kind key=value ...".
func renderTree(spans []tracetest.SpanStub, root trace.SpanID) string {
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	children := map[trace.SpanID][]tracetest.SpanStub{}
	for _, s := range spans {
		parent := s.Parent.SpanID()
		if !ids[parent] {
			parent = trace.SpanID{}
		}
		children[parent] = append(children[parent], s)
	}
	var b strings.Builder
	var walk func(id trace.SpanID, depth int)
	walk = func(id trace.SpanID, depth int) {
		kids := children[id]
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].StartTime.Before(kids[j].StartTime) })
		for _, s := range kids {
			b.WriteString(strings.Repeat("  ", depth))
			b.WriteString(s.Name + " " + s.SpanKind.String())
			var attrs []string
			for _, kv := range s.Attributes {
				switch {
				case shownKeys[kv.Key]:
					attrs = append(attrs, fmt.Sprintf("%s=%s", kv.Key, kv.Value.Emit()))
				case starredKeys[kv.Key] && kv.Value.Emit() != "":
					attrs = append(attrs, string(kv.Key)+"=*")
				case strings.HasPrefix(string(kv.Key), "garm.step.") && kv.Value.Type() == attribute.INT64 && kv.Value.AsInt64() >= 0:
					// A step's time, in nanoseconds, by default.
					attrs = append(attrs, string(kv.Key)+"=*")
				default:
					attrs = append(attrs, string(kv.Key)+"=?")
				}
			}
			if s.Status.Code == codes.Error {
				attrs = append(attrs, "status=error:"+s.Status.Description)
			}
			sort.Strings(attrs)
			if len(attrs) > 0 {
				b.WriteString(" " + strings.Join(attrs, " "))
			}
			b.WriteString("\n")
			walk(s.SpanContext.SpanID(), depth+1)
		}
	}
	walk(root, 0)
	return b.String()
}

// root is the trace's one span whose parent is not in it, and fails the
// test unless that parent is the caller's span.
func root(t testing.TB, spans []tracetest.SpanStub, caller callerTrace) tracetest.SpanStub {
	t.Helper()
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if !ids[s.Parent.SpanID()] {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d roots in the trace, want garmd's server span alone", len(roots))
	}
	if r := roots[0]; r.Parent.SpanID() != caller.spanID || !r.Parent.IsRemote() {
		t.Fatalf("garmd's span %q is the child of %s, not of the caller's span %s", r.Name, r.Parent.SpanID(), caller.spanID)
	}
	return roots[0]
}
