// Package chain is garmd's call chain: one function, Run, that takes a call
// through the ten steps of SPEC 7.4 in their fixed order. Each step lives in
// a package of its own beside this one (authn, visibility, input, dispatch,
// redact and card, ledger); the step packages never import each other, and
// Run is the only place that says which step runs when.
//
// Steps this build does not implement are named where they would run, with
// what stands in for them: steps 4 and 7 are reserved (SPEC 11), step 5 and
// step 10 arrive with approval grants and notify — until then the mount
// allowlist refuses any catalogue that declares them, so nothing they would
// enforce is served.
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
