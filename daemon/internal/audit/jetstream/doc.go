// Package jetstream writes audit rows to the GARM_AUDIT stream (design 7.10):
// one garm.ledger.v1.Event per message, on wire.AuditSubject of the row's
// tenant and app, with the Nats-Msg-Id "<event_id>.<outcome>", and Write
// waits for the stream's acknowledgement.
//
// The message id is what makes a retried write safe: the stream holds one
// message per event id and outcome within its duplicate window, so a write
// whose acknowledgement was lost can be written again without a second row,
// while the intent and the outcome of one call stay two rows. A duplicate
// acknowledgement is therefore a success.
//
// It refuses to hide a failure: a row that is not acknowledged within
// Options.Timeout (or the caller's context, whichever ends first) is an
// error, returned to the chain, which refuses a fail_closed tool and logs
// for any other. CheckStream refuses, at startup, a stream that could lose
// or age out a row before the retention the operator asserted: one that is
// missing, memory-backed, discards old messages when full (or per subject),
// removes messages once consumed, is sealed, does not acknowledge, does not
// cover every audit subject, or keeps messages for less than the assertion.
//
// It creates and changes no stream (the operator or the dev stack does) and
// owns no connection. Batching and falling back to the log are the ledger's
// trade (daemon/internal/ledger/jetstream), deliberately not this one's: an
// audit row that cannot be held must be known to be unheld while the call
// waits.
package jetstream
