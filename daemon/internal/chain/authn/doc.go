// Package authn is chain step 1: it turns the Authorization header into a
// call.Principal, or refuses with deny.Unauthenticated (design 7.4, 7.5).
//
// It owns the bearer scheme, the issuer a token is checked against, the
// registered claims (aud, exp, nbf and iat, with skew), the garm claims read
// strictly, the fold of a delegation chain (the subject and its act levels)
// into one authority, and a bounded cache of verified principals. The key
// sets and the signature check are keyset's; the numbering of compartments
// is the serving catalogue generation's, reached through Taxonomy so that
// this package imports no catalogue.
//
// What it refuses: a missing or non-Bearer header; a token over
// MaxTokenBytes, before it is parsed; anything keyset refuses (not compact,
// no kid, an algorithm off the allowlist, a key the issuer did not publish);
// an iss no issuer is configured for — the unverified iss only picks the one
// key set to try, and the verified iss must then equal it, so one issuer's
// key can never vouch for another's subjects; an aud without the audience;
// a token past exp, before nbf or issued after now, beyond the skew; a chain deeper than
// MaxDepth; a level without sub or garm; a clearance that is unknown or
// unspecified; a malformed exec; and any claim it reads that has the wrong
// JSON type, null included. A compartment the generation does not declare
// is dropped and logged, not refused: an identity provider's typo costs the
// caller that compartment, not every call.
//
// Principal attributes (garm.attrs, docs/decisions/0094) are read the same
// way but judged per attribute: garm.attrs that is not an object refuses the
// token, while a declared attribute whose value has the wrong JSON type, is
// an empty or over-long string, or a list over max_items is absent — only
// that attribute, so a rule reading it fails and refuses. An undeclared
// name is ignored and logged (its name, never its value). The fold only
// narrows: the subject is the only source; an actor's list intersects it;
// an actor's scalar that disagrees, or any value of an actor's the reader
// refuses, makes it absent; an actor never adds one its subject lacks.
//
// Why it is strict: the token is the only thing a caller brings that says
// who it is and what it may do, and the fold is what makes delegation safe —
// every level can only narrow what the chain may do, so an agent acting for
// a person never holds more than either of them.
//
// The cache is keyed by the token's SHA-256 and the Taxonomy value, serves
// an entry only before its token's exp, and holds one generation's entries
// at a time. A cached principal is shared: callers treat it as read-only.
// Deliberately not here: revocation lists and token introspection (a token
// is good until its exp), the meaning of verbs, clearances and tool sets
// for a tool (step 2's), and anything about the executing runner beyond
// recording exec's sub.
package authn
