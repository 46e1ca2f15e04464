// Package toolservice is garm's tool-service conformance kit: it holds a
// running tool service to the hop contract (docs/hop-contract.md) over NATS,
// through the garm.conformance.v1 tools the service serves beside its own.
//
// The cases are data, shipped with the kit in cases/*.json and versioned by
// the file's "version": each names what is sent (invocation header, body,
// timing, lifecycle action) and the one thing expected. Run executes them,
// prints one line per case and a closing "N passed, N failed, N skipped" line,
// and can write JUnit XML. Lifecycle cases (drain, restart) need a process
// the kit started itself (Config.Start); against a process it did not start
// they are skipped, never passed.
//
// It judges only what crosses the bus. It knows nothing of how a service is
// written; a Go service and a TypeScript one are held to the same cases
// (docs/conformance.md).
package toolservice
