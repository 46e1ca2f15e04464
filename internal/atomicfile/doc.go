// Package atomicfile writes a file whole or not at all: the data goes to a
// temporary file beside its path, is synced, and only then takes the path's
// place, so a reader finds what was there or all of the new data, never
// part of it, and a failed write leaves nothing behind. Every place garm
// writes a file another process may read while it is written — an artifact,
// the lake's files, the dev plane's secret, garmd's check cache, a ledger
// dump, written from a stream with WriteFrom — uses it.
package atomicfile
