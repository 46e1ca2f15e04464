// Package logsink records each ledger row as one structured log line: message
// Message, level info, every column of the row as an attribute named as its
// proto field, empty columns included, so every line has the same shape
// whatever the call did (design 7.10, without --ledger-stream).
//
// LogRow and LogFallbackRow are the line itself, shared with the jetstream
// recorder, whose fallen-back rows are the same line plus FallbackKey and
// FallbackReasonKey: one format for every ledger row that reaches a log, so
// one parser reads both.
//
// It refuses to pretend: a logger that discards info lines, or a handler that
// fails to write, makes the row lost, and the Recorder counts it so. It does
// not complete rows (that is chain step 9), does not filter or redact columns
// (a redacted value never reaches a row), and owns no output: the
// *slog.Logger it is given decides where and how lines are written.
package logsink
