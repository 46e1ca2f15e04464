// Command benche2e is garm's end-to-end load harness (make bench-e2e): the
// same small call (calc.v1.Calculator/Add) made three ways, each through
// processes of its own on loopback, measured side by side.
//
//   - direct: a NATS request straight to the tool, the ceiling;
//   - bridge: a bare net/http → NATS bridge with no policy (this command,
//     run as "benche2e bridge"), the floor any HTTP front end pays;
//   - garmd: the governed plane, ledger stream on, the caller's body in
//     JSON; garmd-proto is the same call with a binary body, the bridge's
//     encoding.
//
// It starts nats-server (JetStream, its store in a temporary directory),
// calcd, a token issuer (in this process, idle while calls are measured),
// garmd and the bridge, then runs rounds. Each round measures every target
// in turn, the order rotated from round to round, each measurement by a
// load generator process of its own ("benche2e load"): one caller for the
// median latency, then 32 callers for the throughput and the CPU each
// front end spends per call (from /proc). Ratios are paired within a round
// — the machine is the same for both sides of each — and reported per
// round and as median (min–max), with /proc/loadavg beside each round.
//
// Bounded: every phase runs for a fixed time, the whole run stops at
// --budget whatever happens, everything binds 127.0.0.1, and every process
// it started is ended by its PID (SIGTERM, then SIGKILL) before it returns.
//
// What is deliberately not here: absolute figures as a verdict (two shared
// cores make them noise; the ratios are the result), and the catalogue
// load, which Go benchmarks under daemon/internal/catalogue measure.
package main
