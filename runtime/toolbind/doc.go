// Package toolbind is the contract between the Go bindings protoc-gen-garm
// generates and the runtime that serves them: a Handler, the ToolRef that
// names a tool on the bus, the Registrar a service registers tools on, and
// CodedError, the refusal a tool returns to its caller.
//
// It depends on protobuf alone, so generated code pulls in nothing else and a
// tool service can be compiled, tested and served by any runtime that
// implements Registrar (runtime/garmtool is the one garm ships).
//
// It does not serve anything, talk to NATS or know about garmd. The version
// constant SupportPackageIsVersion1 is the handshake with generated code: a
// generated file and a toolbind that do not match fail to compile.
package toolbind
