// Package pending owns the record of an approval request and the JetStream
// key-value bucket ([Bucket]) where garmd records requests and the approvals
// service records decisions on them.
//
// garmd calls [Store.Ask] when a call to a MODE_GRANT tool arrives without a
// grant: the request carries the tool, the caller (subject, act chain,
// tenant), the canonical texts of the tool's material fields and their
// digest, exactly what a grant's material claim must be. The approvals
// service lists open requests ([Store.Open]), reads one ([Store.Get]) and
// records a human's verdict ([Store.Decide]), with the grant it minted when
// the verdict is to approve. garmd then reads the decision back ([Store.Get])
// and spends the grant through its own step 5, as if the caller had sent it.
//
// The bucket holds three kinds of key, each written once ([keys.go]):
// req.<id> (the request), ask.<hash> (which open request the same caller
// asking for the same material reuses) and dec.<id> (the decision). Every
// write is create-only (or compare-and-swap for the reuse key), and every key
// carries a per-message TTL, so a request disappears when its grant age runs
// out and a decision never outlives its request. Who may write which keys is
// not decided here but on the bus: garmd publishes only req. and ask. keys,
// the approvals service only dec. keys (catalogue-builder/natsperm).
//
// What this package refuses: an id that is not exactly what [NewID] makes
// ([ValidID]: 26 characters of lowercase base32, canonical), so no id can
// name another key or widen a subject; a request whose digest is not the
// digest of its material; a second decision; a decision on a missing or
// expired request; an approval without a grant. It does not check who may
// decide, does not verify grants and does not judge a call: the approvals
// service decides who may approve, and garmd's chain verifies and spends the
// grant. A request is advice to a human, never a credential.
package pending
