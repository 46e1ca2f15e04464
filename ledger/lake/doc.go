// Package lake is the ledger's lake (docs/ledger.md, "Lake";
// docs/decisions/0129–0131): GARM_LEDGER's rows copied to an S3-compatible
// store as Parquet, partitioned Hive-style by date=YYYY-MM-DD/app=<app>/,
// one column per ledger field plus the row's stream position (seq,
// batch_index) and its RFC 9162 leaf hash (leaf_hash), so an engine can
// query the rows and garm ledger verify can check them against the signed
// heads.
//
// It owns four things. Record is a row as a Parquet row and back
// (FromRow, Record.Event): scalars are flat columns, repeated fields are
// Parquet LISTs, tags is a Parquet MAP, and fields a newer writer added
// travel as unknown_fields, so every row rebuilds to the bytes it was
// sealed over. Encode writes a file deterministically: the same rows give
// the same bytes. Export and ExportRange copy the stream to a Bucket:
// each object is named from the stream sequence range it holds
// (ObjectKey), a range's plan (its manifest under _garm/ranges/) is
// written before its objects, and the durable consumer is acknowledged
// only after every object of the range is stored, so a redelivered range
// is rewritten to the same names with the same bytes and a crash leaves
// no partial object under a final name. Scan reads a lake back, from a
// Bucket or a local directory, in stream order, recomputing each row's
// leaf and refusing a row whose columns do not hash to its leaf_hash and
// two objects that hold the same stream messages.
//
// It does not seal, verify heads or query: ledger/verify checks what Scan
// yields, and engines read the files. It never deletes or compacts an
// object: retention is the store's lifecycle rules, and the number of
// objects is bounded by the roll limits instead (decision 0131).
package lake
