// Package catalogue is garmd's catalogue port: one loaded generation of the
// catalogue artifact (design 3.6, 7.2), the pointer that says which generation
// is serving, and the mount allowlist that decides whether a generation may
// serve at all under this garmd's configuration.
//
// A Generation is everything a call needs from the catalogue, computed once
// when it loads and never per call: every tool as a call.Tool (route,
// subject, policy, descriptors, plans, compartments numbered as bits), the
// route table (a map, never a scan), and the numbering of the declared
// compartments in sorted-name order, which principals are numbered by too,
// and the declared principal attributes step 1 binds from tokens (checked
// again at load: a name twice, no type, max_items missing or misplaced).
// Serving holds the current generation; a call reads it once and keeps that
// generation for its whole life, so a reload never answers half a call.
//
// Loading refuses what artifact.Read refuses — an artifact over the size
// ceiling, bytes that are not a catalogue, a vocabulary version this build
// does not read, descriptors that do not resolve on their own, plans that
// do not describe their messages, a taxonomy that misses a name — and, on
// top of it, a catalogue with no tool or with more tools than the operator
// allows. Mount refuses, listing every problem at once, a catalogue that
// declares governance this garmd is not configured (or not built) to
// enforce: approval grants without step 5, notification without --notify,
// audit without a sink that keeps rows long enough, fail_closed without
// audit, a tool at the listing's reserved path, and a tool whose answer can
// carry a card when the catalogue's card vocabulary is not the one garmd
// projects by field number. Mount also compiles the generation's
// protovalidate validator, once (in shards cut by the file declaring each
// input, compiled beside each other), and every instance rule of every
// tool (chain/instance, steps 4 and 7), so a rule that does not compile
// refuses the catalogue rather than its tool's calls; a refused instance
// rule is named by tool and rule.
//
// A reload (Reload) takes from the generation serving what the digests
// prove unchanged — a descriptor file whose bytes and imports' bytes have
// the SHA-256 of one serving was built from, a package plan whose record
// has, the tool model of a package of those very files, and at mount a
// validator shard over those very inputs and an instance rule's program
// checked against those very messages, with the same expression and
// declarations (docs/decisions/0096) — and runs every check on the
// rest. The serving generation is the only cache: a refused candidate
// leaves nothing behind, and nothing the artifact says about itself is
// trusted (docs/decisions/0070, 0076).
//
// Why: a catalogue is the only way garmd learns its tools, so every
// decision the chain makes is only as sound as the generation it reads.
// Reading goes through the same checked reader the catalogue builder
// writes with (catalogue-builder/artifact), so the two programs cannot
// disagree about what an artifact means, and nothing is taken from the
// process's global protobuf registry: the descriptors a tool is decoded
// with are the artifact's own. A declaration that nothing in this process
// would enforce is refused before anything is served (fail closed), rather
// than served unenforced.
//
// Deliberately not here: fetching artifacts (catalogue/source reads a file or
// s3://, and garmd's reloader polls and swaps generations), the visibility
// decision (chain/visibility), and anything per call or per caller.
package catalogue
