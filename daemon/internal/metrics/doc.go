// Package metrics owns what garmd's admin listener exposes on /metrics: a
// Prometheus registry of its own, the series garmd keeps on it, and the
// handler that serves it.
//
// The series are how each call ended (by tool, outcome and wire code), how
// long it took, what the ledger recorder did with its rows, how the token
// cache is doing, which catalogue generation is serving and which build is
// running, beside the standard Go runtime and process collectors. Beside
// them are the series of what garmd depends on (Operations, and the Bus and
// KeySets sources): the bus connection and its reconnects, JetStream
// publishes by stream and result, grant spends, audit write failures, key-set
// ages and fetches, and catalogue reloads. And there are the states an
// operator is woken by (the Ready, QuorumLost and SpansDropped sources):
// whether /readyz answers 200, how many streams the mounted tools need have
// lost JetStream's quorum, and the trace spans the exporter dropped. Their
// names and labels are the constants and descriptors in this package.
//
// It refuses to grow without bound. Every label value is drawn from a set
// fixed by the build or by the serving catalogue: an outcome outside ok,
// denied and error counts as error; a code that is not a wire spelling of the
// deny taxonomy counts as internal; a tool that is empty, looks like a
// request path or is not valid UTF-8 counts under NoTool. A caller's request
// path therefore never becomes a label, however many it invents.
//
// It refuses the global default registry too: nothing that registers itself
// there (a library's init, a test) can add to, or break, what garmd exposes.
// Observing a call is on the hot path of every call, so it resolves each
// (tool, outcome, code) once and afterwards only increments; it never
// allocates.
//
// Deliberately not here: the admin listener (package admin), deciding what a
// call's outcome or code is (the chain and package deny), and anything about
// a call beyond those three labels and its latency — no caller, token,
// argument or redacted value is ever a label.
package metrics
