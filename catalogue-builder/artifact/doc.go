// Package artifact owns the catalogue artifact's bytes (design 3.6): it
// assembles a garm.catalogue.v1.Catalogue from linked descriptors and the
// tool model, writes it deterministically, computes its digest, and reads one
// back, checking that it is whole before anyone decides anything with it.
//
// Determinism is the point of most of this package: descriptors go in
// dependency order from files sorted by path, with source information
// stripped; the taxonomy is sorted by name; plans by package; maps are
// written in key order; and nothing depends on the machine, the working
// directory or the clock unless a build time is asked for. The same sources
// give the same digest anywhere.
//
// Reading refuses an artifact that is larger than MaxSize, that is not a
// catalogue, that was written with a vocabulary version this build does not
// read, whose descriptors do not resolve on their own, whose descriptor
// hashes disagree with its descriptors, whose plans do not describe their
// messages field for field, or whose limits are not its tools' contracts'
// limits, as declared or tightened, and the deployment's own, each sound
// and resolved, sorted by tool then id (checkLimits). It computes nothing a plan already holds: plans
// are checked against the descriptors, never recomputed. ReadToServe, for a
// program that serves the catalogue (garmd), refuses exactly what Read
// refuses but keeps neither the descriptor set nor the field docs: each
// descriptor file is decoded when it is built and dropped then
// (docs/decisions/0070). ReloadToServe is ReadToServe given what this
// process built from the artifact it serves (Built): a descriptor file or
// package plan whose bytes have the same SHA-256 — a file's imports too —
// is taken from there instead of being decoded and built again; whatever
// it accepts, refuses and returns is ReadToServe's (docs/decisions/0076).
// ReadCheckedToServe is ReloadToServe given, besides, the keys of files a
// process of the same executable built and checked before (Checked, which
// garmd's check cache vouches for): such a file is built from its bytes as
// generated code builds its own, without being decoded and checked again;
// everything else is ReadToServe's (docs/decisions/0146).
package artifact
