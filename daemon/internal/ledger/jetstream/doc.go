// Package jetstream records ledger rows on the GARM_LEDGER stream (design
// 7.10): rows are batched per subject (wire.LedgerSubject of the row's tenant
// and app) and published as garm.ledger.v1.Batch messages, each with its own
// Nats-Msg-Id, so the stream drops a batch it already holds when a publish is
// retried.
//
// Record never waits: it encodes the row into its subject's open batch, in a
// bounded buffer, and one goroutine publishes each batch when it reaches its
// row or byte limit or its first row has waited the flush interval. The
// caller wakes that goroutine only when a batch is ready or an interval
// starts, never once per row (docs/decisions/0065). A row the buffer cannot take, a batch that cannot be published
// and a row recorded after Close are written as the logsink line instead,
// marked as fallen back; only a row that cannot even be logged is lost. Close
// publishes everything accepted before it, as long as its context allows,
// and logs the rest. A row is therefore in the stream, in the log, or (when a
// publish landed but its acknowledgement did not) in both; never in neither
// while the logger writes.
//
// It creates no stream and changes no stream: the operator (or the dev
// stack) does, and CheckStream says at startup what is wrong with the one it
// finds. It owns no connection either; whoever made the jetstream.JetStream
// drains and closes it after Close. The audit and notify streams are written
// elsewhere: their rows are one message each, published while the call
// waits, which is the opposite of this package's trade.
package jetstream
