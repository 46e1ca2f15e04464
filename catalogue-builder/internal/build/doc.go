// Package build is garm-catalogue's pipeline from sources to artifact:
// compile (or read an image), build the tool model, add the manifest's
// taxonomy, lint the whole set in catalogue scope, refuse on any error,
// assemble and write the deterministic bytes, then read them back through
// the same checks a reader applies before handing them out.
//
// Every judgement it makes is protoc-gen-garm/compile's — the model, lint,
// plans and descriptor hashes have one implementation — except the few that
// only a catalogue can make: a manifest taxonomy is the whole taxonomy (M1),
// a catalogue serves at least one tool, and each tool's effective limits
// (Catalogue.limits): the contract's, tightened or added to by the
// manifest's limits entries, never loosened, with each problem at its
// line and column of catalogue.yaml (docs/decisions/0123). Whether one
// limit is sound, and how two compare, are compile's (CheckLimit,
// CompareLimits), so lint, the build and garm-catalogue diff read a limit
// one way.
//
// It writes no file; the caller decides where the bytes go, so a refusal
// can never leave a partial artifact behind.
package build
