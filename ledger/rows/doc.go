// Package rows turns the ledger's stored rows into the leaves of the
// verifiable log (docs/ledger.md): a row's leaf is RFC 9162's leaf hash of
// the row's deterministic protobuf encoding (Canonical), so the same row
// read from the stream, from a file or rebuilt from a lake's columns hashes
// the same, whatever encoder wrote it.
//
// Rows are read in the ledger's one order: GARM_LEDGER's stream sequence,
// then the order of the rows inside each garm.ledger.v1.Batch message.
// A file of rows is the Batch messages of the stream concatenated in that
// order (which protobuf reads as one Batch). ScanStream reads the stream,
// ScanFile such a file.
//
// It writes nothing and creates no stream.
package rows
