// Package memory keeps audit rows in memory, for tests that assert which
// audit rows a call wrote and what the chain does when the audit trail is
// down: Rows copies what was written, Fail makes every following write fail
// until Fail(nil).
//
// It is a real Sink, safe for concurrent use, not a mock: what a test sees
// is exactly what the chain handed to its audit port. Unlike GARM_AUDIT it
// does not fold a repeated event id and outcome into one row: a test that
// asserts one intent row per call must see a second write, which the stream
// would hide. It is not for production: it grows without bound and nothing
// outlives the process.
package memory
