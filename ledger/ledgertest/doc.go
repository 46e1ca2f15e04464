// Package ledgertest is the verifiable ledger's test fixtures: the ledger
// and head streams on a test's real JetStream server, rows published as
// garmd publishes them (Batch messages on the ledger subjects), and sealer
// keys generated at run time. Tests only: no production package imports
// it, and it embeds no server (the tests start one with garmtooltest).
package ledgertest
