// Package toolplane is garmd's HTTP surface for callers (design 7.3): it reads
// a request within the plane's bounds, reads its security-relevant headers
// once (ReadHeaders, which every surface uses), hands it to the chain, and
// writes the chain's answer with garm's headers. It decides nothing about
// policy.
//
// It owns the plane's bounds on slow and abusive callers (decision 0031):
// calls in flight beyond Limits.MaxInFlight are shed before their body is
// read (503, Retry-After, a row); a body is read within Limits.BodyTimeout;
// StopReading cuts every body still arriving at shutdown; Guard holds
// another surface on the same listener (MCP) to the same bounds. The route
// is the request target's path as sent, still escaped (decision 0032).
//
// What it refuses before the chain, with no ledger row — the ledger records
// calls that passed the size check, and these never arrived whole: a body
// over the limit (413), one that did not arrive in time (408), one cut at
// shutdown (503). Every answer it writes is Cache-Control: private,
// no-store (CacheControl, which MCP writes too): each is the caller's own,
// or a refusal of the caller's request. The caller's connection going away does not cancel its
// call: a call cut off mid-flight is a call whose effect nobody can know,
// so it runs to its answer or its deadline and its row says which.
package toolplane
