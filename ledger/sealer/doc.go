// Package sealer is the verifiable ledger's sealer (docs/ledger.md,
// docs/decisions/0110): it reads GARM_LEDGER in order, appends each row's
// leaf (ledger/rows) to an RFC 9162 tree (ledger/merkle), and publishes a
// signed tree head (ledger/head) to GARM_LEDGER_HEADS whenever
// Options.EveryRows rows or Options.Every time have gone by since the last
// head, whichever is first.
//
// It is off the hot path: garmd publishes rows and never waits for it. It
// keeps only the tree's frontier and resumes from the frontier carried by
// the last head it finds, reading the stream again from that head's
// position, so rows written while it was down are sealed late and never
// skipped. Each head is published on the condition that the head stream's
// last message is the head it chains to, so two sealers running at once
// cannot fork the chain: the loser's publish is refused and Run returns.
//
// JWKSHandler serves the sealer's public keys as a JWKS, for verifiers.
//
// HeadStreamConfig is the fenced stream an operator creates (delete and
// purge denied, no roll-up); the sealer creates no stream and CheckHeadStream
// refuses one that is not fenced.
package sealer
