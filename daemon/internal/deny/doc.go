// Package deny is garmd's one taxonomy of refusals: the codes a call can end
// with, their wire spelling (String), the one mapping from code to HTTP
// status, the one table of static messages, and the JSON body of design 7.3.
//
// Three kinds of failure are kept apart, as types: Denied is the caller's
// fault (outcome "denied" on the ledger); Failed is a call that could not
// complete — the bus, the tool, or garmd itself (outcome "error");
// Misconfigured is caught at boot and never reaches a caller. Every refusal
// carries its detail for the ledger's error_detail; Wire never writes it. A
// Failed also carries an error kind (the ledger's error_kind); the kinds of
// the hop to a tool are named here (kinds.go), so that failures sharing a
// code — no responders, a bus away, a bus refusing garmd's publish — stay
// apart on the row while the caller sees one static answer.
// Nothing in this package formats a caller's input into a message. Codes
// lists every code, so a table that must cover each (the chain's
// one-row-per-terminal-path test) cannot miss a new one.
package deny
