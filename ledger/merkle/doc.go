// Package merkle is the Merkle tree of the verifiable ledger
// (docs/ledger.md), exactly as RFC 9162 §2.1 defines it: SHA-256, a leaf
// hashed as 0x00 || bytes and an interior node as 0x01 || left || right,
// the tree over n leaves split at the largest power of two below n.
//
// It holds three things. Tree is the sealer's tree: it appends leaf hashes
// and gives the root at its current size while keeping only the frontier
// (one hash per set bit of the size), so sealing costs O(log n) memory
// and resumes from a frontier recorded with a head. InclusionProof and
// ConsistencyProof compute RFC 9162's PATH and PROOF over a list of leaf
// hashes. VerifyInclusion and VerifyConsistency are the RFC's verification
// algorithms (§2.1.3.2, §2.1.4.2), the part an outside verifier runs.
//
// It knows nothing of rows, heads, keys or the bus: the leaf is whatever
// bytes the caller hashes (the ledger hashes each row's deterministic
// protobuf encoding). It depends on the standard library alone, so a
// verifier can vendor it without garm.
package merkle
