// Package transport is the port garmd dispatches tool calls through (chain
// step 6): one request, one reply, bounded by the context's deadline. Its
// child nats implements it with NATS request/reply; Func adapts a function
// for tests and benchmarks that need no bus.
//
// The port speaks the hop contract of runtime/wire — a subject, the
// Garm-Invocation header, binary bodies, micro's error headers — and nothing
// about policy: what to send and what a reply means is the dispatch step's.
package transport
