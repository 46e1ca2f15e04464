// Package toolbind is the contract between the Go bindings protoc-gen-garm
// generates and the runtime that serves them: a Handler, the ToolRef that
// names a tool on the bus, the Registrar a service registers tools on, and
// CodedError, the refusal a tool returns to its caller.
//
// A tool refuses with one of the codes listed by RefusalCodes, most simply
// with a one-line constructor named after the code:
//
//	if req.GetDivisor() == 0 {
//		return nil, toolbind.UnprocessableEntity("division by zero")
//	}
//
// garmd passes such a refusal to its caller with the tool's code (and a static
// sentence of its own, never the tool's message). A CodedError whose code is
// not a refusal code, or is empty, is served as an unclassified 500: it is the
// tool's failure, not an answer, and garmd reports it as its own internal
// error.
//
// It depends on protobuf alone, so generated code pulls in nothing else and a
// tool service can be compiled, tested and served by any runtime that
// implements Registrar (runtime/garmtool is the one garm ships).
//
// It does not serve anything, talk to NATS or know about garmd. The version
// constant SupportPackageIsVersion1 is the handshake with generated code: a
// generated file and a toolbind that do not match fail to compile.
package toolbind
