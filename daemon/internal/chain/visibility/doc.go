// Package visibility is chain step 2's decision and the listing's: the one
// function that says whether a caller may see a tool (design 3.2). It answers
// which gate failed so the ledger can say why; the caller is only ever told
// "not found", whether the gate failed or the route does not exist.
package visibility
