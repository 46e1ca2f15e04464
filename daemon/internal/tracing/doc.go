// Package tracing owns garmd's OpenTelemetry spans: the provider built
// from the standard OTEL_* variables, one server span per call, the NATS
// client span of the dispatch, the trace context a tool receives across
// the hop, and the time of each of the chain's steps that take time: an
// attribute of the server span by default, a child span of its own with
// WithStepSpans (garmd's --trace-steps). Two spans per call rather than
// six is most of what tracing every call costs (docs/decisions/0143).
//
// It refuses to record what a span must never carry: a value of the
// request or the answer, a token, a grant, a clearance or a compartment
// name. The attributes it sets are drawn from fixed sets (a visible tool's
// name, its subject, an outcome, a wire code, a ledger event id, a
// catalogue digest, garmd's version, whether a token was in the cache), and
// every function here takes exactly those, never an error's text: a
// refusal's detail names what the caller may not know (the tool it cannot
// see, the gate that failed). A span for an invisible tool therefore looks
// like one for a missing route.
//
// A nil *Tracer is tracing off: every method is then a no-op that
// allocates nothing, so a garmd with no exporter configured pays nothing
// for this package. The semantic conventions followed are named in
// SemconvVersion (docs/decisions/0060).
package tracing
