// Package gctarget chooses the garbage collector's target for garmd's
// process (--gogc): how much the heap may grow over what is live before a
// collection runs.
//
// garmd holds a catalogue that is live for as long as it serves, and makes
// short-lived garbage on every call; with Go's default (GOGC=100) it
// collects often for little gain, and a higher target buys throughput and
// CPU per call (docs/decisions/0066). A higher target is also more memory,
// so "auto" raises it furthest only where a memory limit bounds the heap:
// GOMEMLIMIT, or the container's memory limit, of which it then sets a soft
// limit as GOMEMLIMIT would.
//
// It never overrides the operator: a GOGC or GOMEMLIMIT in the
// environment is what the Go runtime already applied, and stays. It owns no
// other runtime setting (GOMAXPROCS is the runtime's own, container-aware
// choice).
package gctarget
