// Package dispatch is chain step 6: it carries a checked request to its
// tool over the transport port and turns the reply into the tool's answer or
// a refusal (design 7.4 step 6).
//
// It owns the hop's invocation context (what the tool may know of the call:
// attribution, principal, act chain, the absolute deadline, the call id,
// trace context, the spent grant's jti, the runner's idempotency key — never
// a token, a clearance or a compartment) and the deadline rule: the caller's
// Garm-Timeout-Ms or --tool-timeout, whichever is sooner. It maps replies
// exactly as the status table says: the nine refusal codes pass through as
// tool_refused, any other error code is
// internal, no responders is 503, a bus that is away or refuses garmd's
// publish (a permission, error kind bus_forbidden) is 503 at once, a passed
// deadline is 504, an answer that does not decode as the declared output is
// internal. Ready answers, before the chain spends a grant, the 503 a call
// would meet because the bus is known to be away.
//
// Deliberately not here: the audit write-ahead that precedes dispatch for
// LEVEL_AUDIT tools, which the chain writes through the audit port
// (daemon/internal/audit) before it calls this step.
package dispatch
