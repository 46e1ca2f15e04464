// Package busoutcome tells what a failed JetStream write says about whether
// the write happened: definitely not (it never left garmd, or nothing on
// the bus took it), or unknown (it may have been applied, or be applied
// later, by a server garmd stopped waiting for).
//
// It owns that one classification, used by every writer of shared state —
// the grant spend, the audit sink and the ledger publisher — so that none
// guesses: a definite failure may be answered or fall back at once; an
// unknown one is resolved by reading back or by retrying under the same
// Nats-Msg-Id until the server answers. It refuses nothing and retries
// nothing itself. garmd's connection keeps no reconnect buffer
// (nats.ReconnectBufSize(-1)), which is what lets a write made while the
// bus is away be definite: without it, such a write would sit in the
// client and be applied after garmd had answered.
package busoutcome
