// Package pending owns the record of an approval request and the JetStream
// key-value bucket ([Bucket]) where garmd records requests and the approvals
// service records decisions on them.
//
// garmd calls [Store.Ask] when a call to a MODE_GRANT tool arrives without a
// grant: the request carries the tool, the caller (subject, act chain,
// tenant), the canonical texts of the tool's material fields and their
// digest, exactly what a grant's material claim must be. The approvals
// service lists an approver's inbox ([Store.Inbox]: one tenant's open
// requests, filtered by the approver's judgement before they are bounded,
// in pages that say where to go on), reads one ([Store.Get]) and records a
// human's verdict ([Store.Decide]), with the grant it minted when the
// verdict is to approve. garmd then reads the decision back ([Store.Get])
// and spends the grant through its own step 5, as if the caller had sent it.
// A retry of the same call by the same caller that presents no id finds its
// decided request through the reuse key ([Store.Recall], decision 0113): an
// approval is handed out once (the key is swapped for a marker, as it is when
// the approval is collected by its id: [Store.Collected]), a denial
// answers every retry until the request expires.
//
// The bucket holds five kinds of key, each written once ([keys.go]):
// req.<id> (the request), ask.<hash> (which request the same caller
// asking for the same material reuses or recalls), caller.<hash>.<id> (a caller's
// count), inbox.<hash of the tenant>.<created>.<id> (the tenant's index, so
// an inbox costs what its tenant holds, not what every tenant holds) and
// dec.<id> (the decision). Every write is create-only (or compare-and-swap
// for the reuse key), and every key carries a per-message TTL, so a request
// disappears when its grant age runs out and a decision never outlives its
// request. Keys are listed from the stream's subject index, never with a
// consumer. Who may write which keys is not decided here but on the bus:
// garmd publishes only req., ask., caller. and inbox. keys, the approvals
// service only dec. keys (catalogue-builder/natsperm).
//
// The bucket is fenced ([Fence]): its stream refuses purges, roll-ups and
// message deletes, so no identity allowed to write one key can empty it
// with one publish. [Open], which garmd and the approvals service both bind
// it with, refuses a bucket that is not, printing the command that fences
// it ([FenceCommand]).
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
