// Package builder is `garm-catalogue build` as a library: it compiles a
// catalogue from a catalogue.yaml or from proto include roots, in process,
// through exactly the pipeline the command runs (compile, lint in catalogue
// scope, plans, hashes, deterministic bytes, read back and checked).
//
// It exists so that programs that must build a catalogue at start — the dev
// stack — and tests that need a real artifact do not shell out to the
// command or reach into its internals. It writes nothing: the caller decides
// where the bytes go. A refused build returns every diagnostic in its error.
package builder
