// Package quarantine keeps garmd from calling tool services that do not
// implement the contract the catalogue describes. A Reconciler asks the bus
// which tool services are running — $SRV.PING, then $SRV.INFO per instance —
// and compares the descriptor hash each one advertises (wire.IdentityMetadata)
// with the serving catalogue's hash for its package. A package with a
// running instance that advertises another hash, or none, is quarantined:
// the chain answers its visible tools 503 unavailable instead of sending a
// request whose bytes the service would read as something else (design 4.4,
// 7.3). The reason, in the ledger row's detail and garmd's warning, names
// the package, both hashes and what to run to end it (Verdict.Remedy):
// regenerate, rebuild the catalogue, restart the service.
//
// Only a package's own services speak for it. An instance belongs to the
// packages whose proto services bear its micro name (wire.ServiceName),
// and its INFO answer is believed only when it names the instance that was
// asked, on that instance's own INFO subject — which the bus lets only that
// package's identity answer (docs/operators.md, "Securing the bus"). An
// endpoint it claims on another package's subject counts for nothing and
// is logged, once, as a bus identity trying to act for another; otherwise
// one tool's identity could quarantine every other package. On a bus
// without those permissions nothing proves a name, and this proves nothing
// either.
//
// Verdicts are an immutable snapshot swapped atomically, so the chain's
// per-call cost is a pointer load and a map lookup. A round that could not
// see everything (PING failed or timed out, the bus away) may add
// quarantines but never lifts one: not hearing from a service is no
// evidence that it changed. Likewise an instance of a package that does
// not answer INFO keeps that package's quarantine, and only that package's:
// another identity's silent instance cannot hold it in place. An instance
// PING named that nobody serves (no responders on its INFO subject) is not
// running, and is not counted. A complete round replaces the verdicts
// whole, lifting every package whose running instances all match. A
// package with no running instance is never quarantined; its calls find no
// responders.
//
// Deliberately not here: deciding what the caller is told (the chain and
// deny own that), stopping or fencing the offending service (the bus is
// not garmd's to police), and comparing contract versions — the descriptor
// hash is the wire shape, and only the wire shape can corrupt a call.
package quarantine
