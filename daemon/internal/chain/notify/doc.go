// Package notify is chain step 10 (design 7.4, 7.10): after the ledger, the
// completed row of a MODE_NOTIFY tool's call is published to GARM_NOTIFY on
// wire.NotifySubject of its tenant and tool, for a human on the loop.
//
// It degrades and never pushes back: Notify hands the row to a bounded queue
// and returns at once; one goroutine publishes each row and waits for the
// stream's acknowledgement, with the event id as Nats-Msg-Id so a retried
// row is held once. A row the queue cannot take, one that arrives after
// Close, and one the stream does not acknowledge are logged (event id,
// tool, why; never a column that could hold a value) and counted, never
// returned: a notification missed is an operator's problem to see in the
// metrics, not a caller's answer to change. Close publishes what is queued
// as long as its context allows.
//
// CheckStream refuses, at startup, a GARM_NOTIFY that is missing, does not
// cover every notify subject, does not acknowledge or is sealed, and says
// how to fix it; garmd creates and changes no stream and owns no connection
// here. Which tools notify is mount's decision (MODE_NOTIFY needs --notify)
// and what the row says is step 9's; neither is here. Nor is delivery to a
// human: whoever consumes GARM_NOTIFY does that.
package notify
