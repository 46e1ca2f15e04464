// Package codec turns a call's body into the tool's input message and the
// tool's answer back into the caller's encoding (design 7.3): protojson when
// the request said application/json, binary protobuf otherwise. JSON in
// the plain subset (fields named as the contract names them, holding
// plain values) is read and written directly, to protojson's bytes and
// messages; anything else is protojson's to read, write or refuse
// (decision 0078). A plain request is encoded to binary for the hop the
// same way, directly, to bytes protobuf-go decodes to the same message;
// any other is protobuf-go's to encode.
//
// It refuses what the contract does not describe: unknown JSON fields,
// unknown binary fields at any depth, invalid UTF-8 in strings, nesting past
// protobuf's recursion limit. Its errors carry detail for the ledger; the
// caller is told only that the body does not match (and never the type's
// name). Replies from tools are decoded with unknown fields discarded: a
// field the catalogue does not plan is never passed to a caller.
package codec
