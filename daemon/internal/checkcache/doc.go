// Package checkcache is garmd's check cache (--check-cache): a directory
// that keeps, from one start to the next, the keys of the catalogue's
// descriptor files this very executable built with every check and
// accepted, so that a restart builds those files from their bytes without
// decoding and checking them again (artifact.Checked; docs/decisions/0146),
// and the keys of the files whose tool inputs' validation rules its mount
// compiled, so that a restart's mount compiles those on first use
// (docs/decisions/0148).
//
// The directory holds two files. `key` is 32 random bytes garmd makes the
// first time, readable by its owner alone: only this deployment holds it.
// `checked-files` is the record: a version line, the identity of the
// executable that wrote it (its Go build ID, which changes with any change
// to the code or its dependencies), the two lists of keys, and an
// HMAC-SHA256 of all of it under the key. A record whose MAC does not
// verify, that another executable wrote or that is larger than a catalogue
// can need, a directory others may write to, or a key others may read, is
// not used: every file is checked and every input compiled, as on a first
// start, and the reason is logged. The record is replaced whole
// (internal/atomicfile) after a generation mounts, and only when its keys
// changed.
package checkcache
