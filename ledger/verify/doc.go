// Package verify checks, offline, a ledger's rows against its signed tree
// heads (docs/ledger.md): every head signed by a known key, each chained to
// the one before it, and the rows, in order, hashing to every head's root
// at its size — so a row edited, dropped, added or reordered since a head
// was signed, a head forged or removed, and a row no head covers are each
// reported, naming the first head or rows that fail.
//
// It reads nothing itself: the caller feeds it heads (sealer.ReadHeads, or
// a file) and rows (rows.ScanStream, rows.ScanFile) and it keeps only the
// tree's frontier, so a million rows cost a million leaf hashes and little
// memory.
package verify
