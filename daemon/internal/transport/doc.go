// Package transport is the port garmd dispatches tool calls through (chain
// step 6): one request, one reply, bounded by the request's deadline and
// the context. Its child natsbus implements it with NATS request/reply;
// Func adapts a function for tests and benchmarks that need no bus.
//
// The port speaks the hop contract of runtime/wire — a subject, the
// Garm-Invocation header, binary bodies, micro's error headers — and nothing
// about policy: what to send and what a reply means is the dispatch step's.
// Its errors tell apart what the dispatch step must answer differently: no
// responders, a passed deadline, a bus that is away, and a bus that refused
// the request (a permission, not a slow tool).
package transport
