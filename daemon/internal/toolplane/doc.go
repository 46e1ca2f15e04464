// Package toolplane is garmd's HTTP surface for callers (SPEC 7.3): it reads
// a request within the body limit, hands it to the chain, and writes the
// chain's answer with garm's headers. It decides nothing about policy.
//
// A body over the limit is refused before the chain (413, no ledger row: the
// ledger records calls that passed the size check). The caller's connection
// going away does not cancel its call: a call cut off mid-flight is a call
// whose effect nobody can know, so it runs to its answer or its deadline and
// its row says which.
package toolplane
