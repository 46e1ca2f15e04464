// Package chain is garmd's call chain: one function, Run, that takes a call
// through the ten steps of design 7.4 in their fixed order. Each step lives in
// a package of its own beside this one (authn, visibility, input, instance,
// limit, grant, dispatch, redact and card, ledger, notify); the step packages never
// import each other, and Run is the only place that says which step runs
// when.
//
// Steps 4 and 7 are the tool's instance rules (package instance): step 4
// runs after the request is validated and before step 5 verifies or spends
// a grant, so a rule's refusal spends none and opens no approval request,
// and no grant bypasses a rule; step 7 runs on the decoded answer before
// redaction, a reveal rule that does not hold answering as the tool's own
// 404 and filters removing rows in place (docs/decisions/0095). Step 5 (the
// approval grant, governance.go) and step 10 (notify) run for the tools that
// declare them; the mount allowlist refuses a catalogue that declares either
// when its enforcer is not configured, and each still fails closed at call
// time if it is not.
//
// The limit step (package limit, limits.go) runs after step 4 and before
// step 5, for a tool that declares limits only: a limit's refusal spends no
// grant and opens no approval request, and a call counted and then refused
// before dispatch is given its count back in Run's deferred completion,
// where a concurrency bound's count is given back on every path
// (docs/decisions/0125, 0127).
//
// Step 5 takes its grant from Garm-Grant, or from the decision on the
// caller's approval request (Garm-Approval, through the approval desk), and
// checks either the same; a call that presented neither leaves a request
// for a human when approvals are on. GET /approvals/<id> (approvals.go) is
// the one route that is not a call: it authenticates like one, answers
// where the caller's request stands, and writes its row like one.
//
// Run is the one gate and the one recorder for every surface. The HTTP
// route and MCP each translate their wire into a Request and the Response
// back; what a surface asks besides a call (surfaces.go) is asked here too:
// an admission (authenticate only, MCP's lifecycle methods), a page of the
// listing (tools/list), a tool named by FQN, and the verdict on a
// surface's own approval token or on arguments it could not read. The
// Response says what a surface needs to dress an answer in its own shape —
// the refusal's wire code, a challenge, the caller — and never asks it to
// decide again.
//
// Run guarantees one ledger row per call on every path, panics included
// (terminal_test.go has a case for every code of package deny), and pins
// the catalogue generation it read first for the whole call. Deliberately
// not here: reading a wire (bodies, headers, JSON-RPC) — the surfaces' —
// and the refusals the plane answers before a call arrives whole (a body
// over the limit, or too slow), which have no row.
package chain
