// Package memory keeps ledger rows in memory, for tests that assert which
// rows a call wrote: Rows copies what was recorded, WaitFor waits until a
// number of rows have arrived, Reset forgets them.
//
// It is a real Recorder, safe for concurrent use, not a mock: what a test
// sees is exactly what the chain handed to its ledger port. It refuses
// nothing and has no fallback, so Close changes nothing and rows recorded
// after it are kept like any other. It is not for production: it grows
// without bound and nothing outlives the process.
package memory
