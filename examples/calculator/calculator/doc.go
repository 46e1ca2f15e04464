// Package calculator implements calc.v1.Calculator, garm's smallest example
// tool service: add, divide and summarize.
//
// It shows what a tool owns: computing its full answer and refusing, with a
// toolbind code, what has no answer (a zero divisor is 422, as the contract's
// guidance tells callers). It checks its own inputs even though garmd
// validates every request against the contract first, because a tool is
// reachable by anything on its bus. It knows nothing of NATS, callers or
// policy: cmd/calcd serves it with runtime/garmtool, and its tests call it
// through runtime/garmtooltest.
package calculator
