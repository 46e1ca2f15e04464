// Package fencedkv creates, fences and checks the JetStream key-value buckets whose records garm
// may never lose to one publish: the spent grants, the approval requests and decisions, and the
// highest catalogue version served. Each package that owns such a bucket describes it once as a
// [Bucket] — its name, how messages call it, what losing its records would let happen, the fence
// its stream needs and the commands that create and fence it — and this package does the rest
// the same way for all of them:
//
//   - [Bucket.Check] binds the bucket and refuses it, naming every problem and the command that
//     fixes it, unless it is a key-value bucket, file-backed, not sealed, never discarding old
//     records to make room, and fenced as the Bucket says; it creates and changes nothing, which
//     is all garmd and the approvals service do;
//   - [Bucket.Ensure] creates a missing bucket and fences it, for `garm bus init`, the dev plane
//     and tests; an existing bucket is only fenced, since updating it to its creation
//     configuration would undo a fence, which the server refuses.
package fencedkv
