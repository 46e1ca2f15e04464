// Package reference is the Go implementation of the garm.conformance.v1
// contract: the handler behaviours docs/hop-contract.md specifies, served by
// runtime/garmtool. The tool-service kit (conformance/toolservice) runs
// against it in its own tests, so the Go runtime is held to the same cases as
// a service written in any other language.
//
// It holds behaviour only. It does not connect to NATS or choose how it is
// served; cmd/garm's conformance command and the kit's tests do that.
package reference
