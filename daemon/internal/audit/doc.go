// Package audit is the port the audit rows of LEVEL_AUDIT tools go through
// (design 7.4 step 6 and the paragraph after step 10, design 7.10): Sink, which
// writes one row and says whether it is durably held. Adapters live in its
// children: jetstream publishes each row to GARM_AUDIT and waits for the
// stream's acknowledgement, memory keeps rows for tests.
//
// A Sink refuses nothing silently: Write returns only once the row is held,
// or with the error that kept it from being held. What a failure means is
// the chain's decision, not the sink's — a fail_closed tool is refused
// before it is reached, any other tool goes on and the failure is logged —
// so a Sink neither retries behind the caller's back past its own deadline
// nor falls back to anywhere else.
//
// Why a separate port from the ledger: the ledger is a record of what
// happened, written after the call and allowed to fall back to the log; the
// audit trail is written ahead of the call (the "intent" row) and again
// after it (the outcome row), and a tool that declares fail_closed is only
// run once its intent is held. The two trades are opposite, so they are two
// ports. Completing a row (which columns hold what) is chain step 9's job,
// and deciding which tools are audited is mount's; neither is here.
package audit
