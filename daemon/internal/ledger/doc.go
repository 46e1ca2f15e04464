// Package ledger is the port every ledger row goes through (design 3.7, 7.10):
// Recorder, and the counters an operator watches. Adapters live in its
// children: logsink writes one structured log line per row, jetstream
// batches rows onto GARM_LEDGER and falls back to the log line, memory keeps
// rows for tests.
//
// Recording never fails or blocks a call: a Recorder that cannot record a
// row falls back or counts the loss, but Record always returns at once.
// Completing a row (which columns hold what) is chain step 9's job, not the
// recorder's.
package ledger
