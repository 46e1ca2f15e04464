// Package replay is the port through which an approval grant is spent
// (design 7.9): Spender, its one refusal ErrSpent, and Key, the bucket key of
// a grant. Adapters live in its children: jetstream spends in the
// GARM_GRANTS_SPENT key-value bucket shared by every replica, memory spends
// in the process, for tests.
//
// What it refuses: a key spent before, with ErrSpent. Every other error from
// Spend means nothing is known about the key — the store was unreachable,
// the write timed out, the context ended — and the caller must refuse the
// call as if the grant were spent: a grant whose single use cannot be
// proved is not used (fail closed).
//
// Why a port: single use across replicas is the whole point of a grant,
// and only an atomic create in a store every replica shares gives it. The
// chain's step 5 decides whether a grant verifies; whether it was used
// before is this port's one question, asked last, so that no grant is
// burnt by a call that a cheaper check would have refused.
//
// Deliberately not here: what a grant is, its claims and its signature
// (chain/grant owns them), how long a spent key must be kept (the bucket's
// TTL, checked against the tools' ceilings when a catalogue mounts), and
// any way to un-spend a key.
package replay
