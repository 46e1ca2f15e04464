// Package keyset owns the public keys of one signer, as published at a JWKS
// URL, and the verification of a compact JWS against them. Chain step 1
// verifies bearer tokens with it and step 5 verifies approval grants with
// it; it knows nothing of either's claims: it returns the verified payload
// and leaves its meaning to the caller.
//
// A Set is fetched lazily on first use, kept for TTL, refreshed in the
// background when a use falls within RefreshAhead of its end, and refetched
// for an unknown key id at most once per UnknownKidInterval after a fetch
// that succeeded. A fetch that failed, whatever caused it, is retried after
// RetryAfterFailure instead: an endpoint that comes back during a key
// rotation is asked again within seconds, not a minute later. Only one fetch
// is ever in flight per Set: every caller that needs it waits on that one. A
// Set that is past its TTL and cannot be refreshed refuses every signature
// (fail closed): old keys are never trusted beyond their time because the
// endpoint went quiet.
//
// What it refuses, and why. The JWS must be compact serialization with one
// signature (the JSON serializations can carry several, and unprotected
// headers); its header must name a kid and an algorithm from the allowlist
// in code (design 7.5) — never "none", never HMAC, whose secret would be
// whatever the verifier is handed, public key bytes included. The key is
// chosen by kid from this Set only: the jku, x5u, jwk and x5c headers are
// never read, so a token cannot bring its own key. The key's type and curve
// must fit the algorithm, and a key that declares alg is used for that
// algorithm only. Headers this package does not understand and that change
// how a signature is checked (crit, b64) are refused rather than guessed at.
//
// What is deliberately not here: claims, issuers, audiences and times (the
// callers own them), certificate chains (x5c is not validated, so it is not
// used), and any cache of verified results (a verification is a pure function
// of the token and the keys; caching its meaning is the caller's choice).
package keyset
