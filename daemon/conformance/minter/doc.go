// Package minter is the minter conformance kit (issue 33 §3, docs/conformance.md "Minters"): it
// holds a token or grant minter garm did not build to what garmd accepts and refuses.
//
// A suite is a versioned YAML file ([Suite], [LoadSuite]) naming the minter's shape, how garmd
// is configured to trust what it mints (exact issuer, key set, audience) and its cases. Each case
// asserts exactly one thing, of four kinds: a token that must verify with given claims
// ([KindToken]); a token request that must be refused ([KindTokenRefused]); a grant that must
// verify for a given tool, caller and material ([KindGrant]); a grant request that must be
// refused ([KindGrantRefused]). [Run] sends each case to the minter through a [Driver] and prints
// one line per case and an "N passed, N failed" line.
//
// Every answer is judged by garmd's own code, not a copy: a token by chain step 1's
// authn.Authenticator (the principal it folds is compared with the case's claims), a grant by
// chain step 5's grant.Verifier.Check, given a MODE_GRANT tool with the case's approval policy,
// the case's caller and a request whose material fields hold the case's values, so the material
// digest is recomputed from a request exactly as garmd recomputes it. Nothing is spent. A refusal
// is a 4xx answer; a minter that cannot be reached, fails with a 5xx or answers what cannot be
// read has not refused, so a minter that is down fails every case rather than passing the
// refusals.
//
// It refuses to run ([ErrNothingToCheck]) without a suite holding cases, an endpoint and a
// driver, and refuses a suite with an unknown key, an unknown kind or shape, a case of a kind its
// shape cannot mint, or a grant case without the policy garmd's catalogue requires: a
// conformance run with nothing to check must not report ok.
//
// Drivers here: [GetDriver], the dev identity provider's shape (GET /token with a query, POST
// /grant with JSON), and [FormPostDriver], a security token service's token endpoint (a form
// post whose client authenticates with an ES256 private-key JWT, RFC 7523). The approvals
// service's driver, which records a request in the pending bucket as garmd does and approves it
// through the service's pages, is the test entry point's, because it signs in through
// approvals/approvalstest (decision 0107).
//
// The entry point is this package's tests under the build tag conformance, so an ordinary go
// test needs no minter: the shipped suites in testdata run against the real dev identity
// provider, the real approvals service (embedded NATS) and a fixture STS on loopback, and
// TestAnExternalMinter runs a suite given by flags against a minter already running.
//
// Deliberately not here: minting anything, judging a minter's key management, revocation or
// discovery documents, and any assertion garmd does not make.
package minter
