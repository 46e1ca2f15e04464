// Package duckdbtest holds only a test: an auditor's questions asked of an
// exported lake by a real engine, DuckDB through its Go binding, and
// checked against the stream (docs/ledger.md, "Lake").
//
// It is a package of its own because the binding is cgo and links DuckDB:
// only `go test` of this package pays for that build, and nothing garm
// ships imports it (the binaries stay pure Go, CGO_ENABLED=0).
package duckdbtest
