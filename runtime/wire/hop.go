package wire

import "slices"

// Headers of a call and its answer on the bus.
const (
	// InvocationHeader carries the call's InvocationContext, encoded by
	// EncodeInvocation. A request carries exactly one.
	InvocationHeader = "Garm-Invocation"
	// ErrorCodeHeader carries the code of an answer that is not a response:
	// a tool's refusal or the runtime's. It is NATS micro's standard error
	// code header.
	ErrorCodeHeader = "Nats-Service-Error-Code"
	// ErrorHeader carries the message that goes with ErrorCodeHeader: NATS
	// micro's standard error description header.
	ErrorHeader = "Nats-Service-Error"
)

// Keys of the metadata a tool service publishes on $SRV.INFO.
const (
	// IdentityMetadata is the descriptor hash of the proto package the
	// service implements; garmd compares it with the catalogue's.
	IdentityMetadata = "garm.identity"
	// ContractVersionMetadata is the contract version the service's bindings
	// were generated with.
	ContractVersionMetadata = "garm.contract_version"
)

// refusalCodes mirrors toolbind's list (a test keeps them equal): garmd may
// import wire but not toolbind, and toolbind may depend on nothing but
// protobuf.
var refusalCodes = []string{"400", "403", "404", "409", "415", "422", "429", "502", "504"}

// RefusalCodes returns the codes garmd passes to its caller as the tool's own
// refusal, in ascending order. An answer with any other error code is the
// tool's failure.
func RefusalCodes() []string { return slices.Clone(refusalCodes) }

// IsRefusalCode reports whether code is one of the RefusalCodes.
func IsRefusalCode(code string) bool { return slices.Contains(refusalCodes, code) }
