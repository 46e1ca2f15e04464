package metrics

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/garm-dev/garm/daemon/internal/deny"
)

// NoTool is the tool label of a call that resolved no visible tool: an
// unknown route, a tool the caller may not see, a call refused before its
// route was looked at.
const NoTool = "-"

// The outcomes a call ends with, as deny.Outcome spells them.
const (
	OutcomeOK     = "ok"
	OutcomeDenied = "denied"
	OutcomeError  = "error"
)

// wireCodes is every wire spelling of the deny taxonomy. deny.Code is a
// uint8 and spells any code outside its table as internal, so walking all
// 256 values yields exactly the set, with no second copy of it here.
var wireCodes = func() map[string]struct{} {
	out := make(map[string]struct{})
	for c := range 256 {
		out[deny.Code(c).String()] = struct{}{}
	}
	return out
}()

// seriesKey is one (tool, outcome, code) after normalisation: outcome and
// code are drawn from fixed sets, tool from the catalogues served.
type seriesKey struct {
	tool, outcome, code string
}

// callSeries is a resolved pair of children, so that observing a call is two
// atomic updates and a map read.
type callSeries struct {
	calls   prometheus.Counter
	latency prometheus.Observer
}

// ObserveCall counts one answered call and its latency. tool is the FQN of
// the visible tool the call resolved, or "" (or NoTool) when none was;
// outcome is deny.Outcome's; code is the wire code of the refusal or
// failure, "" when ok. Values outside those sets are folded as the package
// documentation says, never added as new label values.
func (m *Metrics) ObserveCall(tool, outcome, code string, d time.Duration) {
	m.ObserveCallContext(context.Background(), tool, outcome, code, d)
}

// ObserveCallContext is ObserveCall for a call whose span is on ctx: the
// latency observation carries the span's trace id as its exemplar when
// the span is sampled (docs/decisions/0060).
func (m *Metrics) ObserveCallContext(ctx context.Context, tool, outcome, code string, d time.Duration) {
	k := normalise(tool, outcome, code)
	var s *callSeries
	if v, ok := m.series.Load(k); ok {
		s = v.(*callSeries)
	} else {
		s = m.resolve(k)
	}
	s.calls.Inc()
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		if eo, ok := s.latency.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(max(d, 0).Seconds(), prometheus.Labels{ExemplarTraceID: sc.TraceID().String()})
			return
		}
	}
	s.latency.Observe(max(d, 0).Seconds())
}

// ExemplarTraceID is the label of a latency exemplar: the trace id of the
// call observed.
const ExemplarTraceID = "trace_id"

// resolve finds the children for k once. Two calls racing on a new key may
// both resolve it; the vectors hand both the same children, and the map
// keeps one.
func (m *Metrics) resolve(k seriesKey) *callSeries {
	calls, err := m.calls.GetMetricWithLabelValues(k.tool, k.outcome, k.code)
	if err != nil {
		// normalise admits only valid label values; this is unreachable
		// unless it stops doing so, and then the call is still counted.
		k.tool = NoTool
		calls = m.calls.WithLabelValues(k.tool, k.outcome, k.code)
	}
	s := &callSeries{calls: calls, latency: m.latency.WithLabelValues(k.tool, k.outcome)}
	v, _ := m.series.LoadOrStore(k, s)
	return v.(*callSeries)
}

// normalise maps any input onto the bounded label sets.
func normalise(tool, outcome, code string) seriesKey {
	switch outcome {
	case OutcomeOK:
		return seriesKey{tool: toolLabel(tool), outcome: OutcomeOK}
	case OutcomeDenied:
	default:
		outcome = OutcomeError
	}
	if _, ok := wireCodes[code]; !ok {
		code = deny.Internal.String()
	}
	return seriesKey{tool: toolLabel(tool), outcome: outcome, code: code}
}

// toolLabel keeps a tool FQN (pkg.name: no slash) and turns anything else
// into NoTool. A request path always contains a slash, so a caller-chosen
// path handed over by mistake (it is what the ledger's tool column holds
// when no tool was resolved) still cannot mint a series.
func toolLabel(tool string) string {
	if tool == "" || strings.IndexByte(tool, '/') >= 0 || !utf8.ValidString(tool) {
		return NoTool
	}
	return tool
}
