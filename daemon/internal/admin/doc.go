// Package admin owns garmd's admin listener (design 7.1's --admin-listen): a
// plain HTTP surface, separate from the tool plane, that answers whether the
// process is alive (/healthz), whether it is ready to serve calls (/readyz)
// and what its metrics are (/metrics).
//
// It refuses everything else. The handler is built from a readiness function
// and a metrics handler and holds nothing more, so no tool call, token,
// ledger row or redacted value is reachable through it, whatever path or
// method is asked for: other paths are 404, other methods 405 with Allow.
// The bodies are short plain text for an operator or a probe; the readiness
// reason is the Ready function's error message, served verbatim to anyone
// who can reach the listener, so it must be a static operator-facing
// sentence and never carry a call's data.
//
// The listener is its own so that probes and scrapes neither compete with
// calls nor need a token, and so that it can stay on loopback (the flag's
// default) while the tool plane faces callers. Binding it elsewhere is an
// operator's deliberate choice: Listen allows it, and IsLoopback tells the
// caller when to warn about it.
//
// A ready answer may carry one more line, the Detail function's: what the
// serving garmd serves (with --catalogue-keys, the signed catalogue's
// version and signers), so an operator's probe shows which policy answers.
//
// Deliberately not here: which series exist (package metrics), what makes
// garmd ready (garmd's Ready function) or what its detail says, and the
// order of shutdown (garmd decides when the context given to Serve ends).
package admin
