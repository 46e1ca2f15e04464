// Package head is the ledger's signed tree head (docs/ledger.md): the
// statement, signed with the sealer's Ed25519 key, that the first Size
// rows of GARM_LEDGER hash to Root under RFC 9162's tree (ledger/merkle),
// chained to the head before it by that head's hash.
//
// The signed bytes are Message: a fixed, line-oriented text of every field
// of Head, so a verifier in any language can rebuild them without a
// protobuf or JSON canonicalisation library. A head travels as the JSON of
// Signed, which adds the signature and, unsigned, the tree's frontier: the
// sealer resumes from it, and it is checked against the signed root before
// it is trusted.
//
// Keys are Ed25519 only: one algorithm means no algorithm choice for an
// attacker to steer. A key's id is its RFC 7638 thumbprint, so a JWKS
// (JWKS) names every key a verifier should accept and a head names the one
// that signed it. Private keys are PKCS #8 PEM files the operator makes
// (GenerateKeyFile) and garm never writes anywhere else.
package head
