// Package limit is the chain's limit step (issue 34): after step 4 and
// before step 5 spends a grant or step 6 dispatches, it counts the call
// against each of its tool's effective limits (Catalogue.limits: the
// contract's, tightened or added to by the deployment) and refuses a call
// over one with 429 rate_limited naming the limit (deny.RateLimit).
//
// It owns the compilation of a generation's limits at mount (Compile: an
// unknown tool, a bad id, window or key, a rate whose count is below its
// cost, a concurrency bound of 0, a tightened limit looser than its
// contract, a contract limit missing from the catalogue — each refuses the
// catalogue, naming tool and limit), everything a call needs computed
// then (the subject prefix, the key's recipe), and the step (Limiter):
//
//   - Exact across replicas: one counter per (limit, key, window) on a
//     JetStream counter stream (limit/jetstream), one round trip per limit
//     and call. The key's values are digested (keyToken), so what a caller
//     sends never shapes a subject. The window is the bus's clock, read
//     back from a stored counter and refreshed in the background
//     (docs/decisions/0126), so replicas whose clocks disagree count one
//     window. Counters expire on their own with their stream's max_age.
//   - A tenant counts at most KeyCap distinct keys per limit and window;
//     past it a new key is refused before it makes a counter.
//   - A concurrency bound counts a call in the lease epoch it was admitted
//     in and reads the epoch before; its count is given back when the call
//     ends, and the count of a replica that died ends with its lease
//     (Lease, docs/decisions/0127).
//   - Fail closed: a count that does not answer within Bound refuses the
//     call 503 limit_unavailable; a soft limit admits instead on the
//     replica's share of what the bus last said remained of the window
//     (the highest total the bus returned to its admissions is recorded
//     per subject, in a bounded map; a hard limit records nothing).
//   - Release gives back what a call counted that it did not use: a rate's
//     when the call never reached the tool, a concurrency bound's always.
//
// A tool with no limit costs nothing: Limits.Of answers nil and the chain
// does not call the step. Deliberately not here: the counter's transport
// (limit/jetstream), the wire shape of a refusal (deny's), and the
// header fields (the surfaces').
package limit
