// Package reference is the Go implementation of the garm.conformance.v1
// contract: the handler behaviours docs/hop-contract.md specifies, served by
// runtime/garmtool. The tool-service kit (conformance/toolservice) runs
// against it in its own tests, so the Go runtime is held to the same cases as
// a service written in any other language.
//
// It holds behaviour, and ServeProcess, which serves it as a process for the
// kit's exec mode (the tests of cmd/garm and of the kit start their own test
// binary that way).
package reference
