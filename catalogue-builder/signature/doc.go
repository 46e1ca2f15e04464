// Package signature owns a catalogue's signatures (issue 36 §1): the
// statement its signers vouch for, the DSSE envelope that carries their
// signatures, the catalogue key set that says whose signatures count, and
// the reading of an artifact with its envelope.
//
// A Statement names the artifact's digest (artifact.Digest, computed by
// whoever reads the bytes), the catalogue's name, its version number and
// when it was first signed. It is the payload of a DSSE envelope of
// PayloadType; each signature is over DSSE's pre-authentication encoding
// of the type and the statement's exact bytes, by an Ed25519 or ECDSA
// P-256 key named by its RFC 7638 thumbprint. Several signers sign one
// statement: Sign makes the envelope, AddSignature adds to it.
//
// What it refuses, and why. Parse reads an envelope strictly and within
// bounds: one encoding of each value (exact member names, no member twice,
// canonical standard base64, the statement in its one JSON encoding), so
// that bytes cannot be re-encoded into a different envelope that still
// verifies and two readers never disagree about what one says. A key set
// (ParseKeySet) holds catalogue keys only: JWKs whose use is KeyUse, whose
// alg fits their type, whose kid is their thumbprint; a token key, a key
// of one type presented as another, or anything odd refuses the whole set.
// Verify checks each signature with the one key and algorithm its keyid
// names, counts a key once however often it signed, sets aside keys it
// does not know, refuses a known key's bad signature outright, and only
// then compares the signed digest with the artifact's. Every refusal wraps
// one sentinel error; Reason names it for a log line. Policy is the
// minimum-signer and per-group rule, a pure function of what verified.
//
// Where the signatures live (docs/decisions/0133): beside the artifact, at
// EnvelopeLocation; the publisher writes the artifact first and the
// envelope last; ReadPair reads them in the opposite order and Transit
// tells a pair caught mid-publication ("not yet") from one that stays
// broken. docs/decisions/0132 records the envelope and key choices.
//
// What is deliberately not here: fetching key sets or artifacts (the
// caller passes bytes or a Fetch), remembering the highest version served
// (garmd's, on the bus), and deciding whether a refusal stops a boot or
// keeps the previous generation serving (garmd's). Nothing here logs.
package signature
