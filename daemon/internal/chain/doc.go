// Package chain is garmd's call chain: one function, Run, that takes a call
// through the ten steps of SPEC 7.4 in their fixed order. Each step lives in
// a package of its own beside this one (authn, visibility, input, instance,
// grant, dispatch, redact and card, ledger, notify); the step packages never
// import each other, and Run is the only place that says which step runs
// when.
//
// Steps 4 and 7 are the tool's instance rules (package instance): step 4
// runs after the request is validated and before step 5 verifies or spends
// a grant, so a rule's refusal spends none and opens no approval request,
// and no grant bypasses a rule; step 7 runs on the decoded answer before
// redaction, a reveal rule that does not hold answering as the tool's own
// 404 and filters removing rows in place (docs/decisions/0095).
//
// Step 5 takes its grant from Garm-Grant, or from the decision on the
// caller's approval request (Garm-Approval, through the approval desk), and
// checks either the same; a call that presented neither leaves a request
// for a human when approvals are on. GET /approvals/<id> (approvals.go) is
// the one route that is not a call: it authenticates like one, answers
// where the caller's request stands, and writes its row like one.
//
// Run guarantees one ledger row per call on every path, panics included,
// and pins the catalogue generation it read first for the whole call.
package chain
