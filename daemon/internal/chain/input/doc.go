// Package input is chain step 3 (design 7.4): what a caller may put in a
// request before garmd forwards it.
//
// 3a, the write check (CheckWrites): a request that sets any field its
// caller may not write is refused (403), wherever the field sits — at the
// top, in any element of a list of messages, in any value of a map of
// messages — and a runner-sourced field is refused unless the caller's token
// carries an exec claim; the one such field, when allowed, becomes the
// invocation's idempotency key.
//
// It refuses rather than strips. Quietly dropping what a caller may not
// write would forward a request the caller did not make; refusing tells the
// ledger exactly which path was refused (never its value), and a caller who
// may write everything it sent is untouched. Writability is decided once per
// (input plan, caller shape) and cached in a bounded cache shared by every
// call, so the per-call work is a walk of the unwritable paths only, and the
// walk stops at the first field that is set. Compartment bits that do not
// match their rule make the field unwritable. A plan that does not fit the
// request — a path that does not resolve, a runner-sourced field that is not
// a top-level string, two runner-sourced fields set — fails the call as
// garmd's fault, not the caller's.
//
// 3b, validation (Validate): the generation's protovalidate validator runs
// the request's own rules, CEL included, and broken rules answer 400 with a
// list of violations. The list tells the caller only about the input schema
// it was listed (design 7.6): a violation is listed when its field is in that
// schema; a CEL rule when every field its expression reads is (found by
// parsing the expression, once per rule, and walking what it selects of
// `this`); a oneof or message-oneof rule when every field it concerns is.
// Anything that cannot be placed — a path the descriptors do not resolve, a
// rule that cannot be found or analysed — is withheld, or listed only to a
// caller shown the whole input. A listed message that would quote a value of
// the request is dropped, keeping the rule id (the rule is on
// requestValues). Paths render with list indexes as [i] and every map key as
// [*], so no key reaches the caller or the ledger through a path. The
// ledger's detail holds every violation with its message; a validator that
// fails other than with violations is garmd's fault, and its text — CEL's,
// which quotes values — is withheld.
//
// The shown set per (input plan, caller shape) and the analysis per rule
// are cached in bounded caches, so a call pays for protovalidate and for the
// violations it has, never for parsing.
//
// Deliberately not here: unknown fields, which decoding refuses before this
// step (design 7.3); and the listing itself. 3b repeats the listing's test
// for what a caller is shown (listing.InputSchema: writable, not
// runner-sourced, no hidden ancestor) because it needs the set of paths, not
// the assembled schema; both call the same Shape.Reaches.
package input
