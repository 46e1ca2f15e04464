// Package busoutcometest makes the unknown outcome busoutcome classifies
// happen on demand against a real server: a JetStream client whose next
// publishes reach the stream (or not, as the test says) while their
// answers are lost. It is for tests of the writers that must not guess —
// the spend, the audit sink, the ledger publisher — and nothing else.
package busoutcometest
