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
// Run guarantees one ledger row per call on every path, panics included,
// and pins the catalogue generation it read first for the whole call.
package chain
