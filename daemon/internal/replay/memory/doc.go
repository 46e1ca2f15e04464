// Package memory is a replay.Spender that keeps spent keys in the process,
// for tests of whatever spends grants: Spends lists the keys spent, Has asks
// about one, Fail makes every later Spend fail as an unreachable bucket
// would.
//
// It is a real Spender, safe for concurrent use, not a mock: a key is spent
// once, atomically, and a second Spend of it is replay.ErrSpent. It is not
// for production: one process is not every replica, nothing outlives the
// process, and it grows without bound.
package memory
