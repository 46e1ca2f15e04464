// Package fieldpath walks a plan rule's field-number path over a dynamic
// message: it resolves the path in a message's descriptors, step by step,
// and reports whether any instance of the field it names is present,
// through singular messages, every element of a list of messages and every
// value of a map of messages. It also holds the two plan-order helpers every
// resolution of a plan needs: a rule's compartment bits, failing closed when
// they do not match the rule, and whether one path lies below another.
//
// It decides nothing about policy. Who may read or write a field, what is
// withheld and what is refused belong to the step packages that call it
// (chain/input, chain/redact); here is only where a field is and whether a
// message holds it. A path that does not resolve is an error whether or not
// any data lies below it, so a plan that does not fit its message fails the
// same way on every call, never only when a caller happens to send the data.
//
// Why a package of its own: step packages may not import each other, and
// the write check and redaction walk the same paths by the same rules. One
// walk means a path resolves, or fails, alike for both.
//
// Deliberately not here: changing a message. Withholding a field (redact)
// walks paths with Step, Resolvable and Child, and keeps its own walk.
package fieldpath
