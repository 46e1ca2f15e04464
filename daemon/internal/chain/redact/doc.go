// Package redact is chain step 8's field plan (design 7.7): it decides what of
// a tool's answer a caller may not read, withholds it, and tells the ledger
// how much was withheld and under which plan, without ever naming a value.
//
// It owns three things. Resolution: a tool's output plan resolved for a
// caller's shape (clearance and compartments) into the rules that shape may
// not read — a rule below a denied one is left out, its parent's withholding
// takes it — plus the audit_on_read rules the shape may read, and the
// redaction_plan content address; resolutions are cached per (plan, shape)
// in a bounded cache shared by every call. The transforms of on_deny
// (transform.go): omit, mask, hash, email_domain, keep_last, truncate,
// card_bin_last4, ip_prefix, url_origin and date_grain, each a pure function
// of one value, with every failure, kind mismatch or unset arm falling back
// to omit. Application: walking each denied rule's path, by field number,
// through nested messages, every element of a list of messages and every
// value of a map of messages, and applying the rule's arm to the field in
// every instance — to each element of a list and each value of a map of
// scalars or Timestamps, clearing the whole field when one of them cannot
// be transformed; counting each rule that changed something once
// (redaction_count) and each audited rule the answer still carries once
// (disclosed_count); and dropping every unknown field, which no rule covers.
//
// It refuses to guess. A rule whose path does not resolve in the answer's
// descriptors, an answer of another message than the plan's, or a tool
// without an output plan is an error, which the chain answers as an internal
// failure: an answer that cannot be redacted is not sent. Compartment bits
// that do not match their rule withhold the field. Answers are walked
// through protoreflect alone, so a dynamicpb message built from the
// catalogue's descriptors is redacted exactly as a generated one would be.
//
// Why here and why this way: tools return their full answer and never
// re-decide access (design 1), so this step is the only place where a value a
// caller may not read is kept from them. Withholding is decided once per
// shape and plan, so the per-call work is a walk of the denied paths only.
//
// The hash arm is keyed by garmd's secret (and, with per_tenant_salt, by a
// key derived from it and the caller's tenant for that call alone), so a
// hashed value can be joined across answers but not guessed back.
//
// Deliberately not here: card projection (design 7.8), which runs after the
// field plan and decides per card node, not per field; and custom
// transforms, for which Redaction reserves a number (design 11).
package redact
