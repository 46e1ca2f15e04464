// Package input is chain step 3 (SPEC 7.4): what a caller may put in a
// request before garmd forwards it. It owns the write check, 3a: a request
// that sets any field its caller may not write is refused (403), wherever
// the field sits — at the top, in any element of a list of messages, in any
// value of a map of messages — and a runner-sourced field is refused unless
// the caller's token carries an exec claim; the one such field, when
// allowed, becomes the invocation's idempotency key.
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
// Deliberately not here: unknown fields, which decoding refuses before this
// step (SPEC 7.3); and 3b, protovalidate's rules with violations listed only
// for fields the caller was shown, which arrives with input validation.
package input
