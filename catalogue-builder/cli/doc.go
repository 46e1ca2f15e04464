// Package cli is the garm-catalogue command line: one function per command,
// flags parsed with the standard library, and three exit codes — 0 when the
// command did what was asked, 1 when it refused (a lint error, an unreadable
// artifact, a widening diff under --fail-on-widening, a failed upload), 2
// when it was asked wrongly (an unknown command or flag, a missing
// argument).
//
// Commands print results on stdout and everything else — warnings,
// diagnostics, refusals — on stderr, so a script can capture an artifact's
// digest or a diff without parsing around noise. The work itself lives in
// the sibling packages (build, artifact, inspect, diff, publish); this
// package only wires arguments to them and words the outcome.
package cli
