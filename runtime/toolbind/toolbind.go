package toolbind

import (
	"context"

	"google.golang.org/protobuf/proto"
)

// Handler serves one tool: it receives the decoded request and returns the
// full answer, or an error. Generated code adapts a typed method of a
// <Service>Handler to it.
type Handler func(ctx context.Context, req proto.Message) (proto.Message, error)

// ToolRef names one tool and where it is served. Generated code lists one per
// tool in <Service>Tools.
type ToolRef struct {
	// FQN is "<proto package>.<tool name>", e.g. "calc.v1.add".
	FQN string
	// Subject is the NATS subject the tool is served on.
	Subject string
	// Method is the HTTP path garmd routes, "/<package>.<Service>/<Method>".
	Method string
	// Service is the full name of the proto service; tools of one service
	// share its queue group.
	Service string
	// ContractVersion is the contract_version the bindings were generated
	// with.
	ContractVersion string
	// DescriptorHash is the wire-shape identity of the tool's proto package.
	DescriptorHash string
}

// Registrar is what generated Serve<Service> functions register tools on.
// newRequest returns an empty request message for the tool to unmarshal into.
type Registrar interface {
	Endpoint(ref ToolRef, newRequest func() proto.Message, h Handler) error
}

// CodedError is a tool's refusal: a status code garmd passes to its caller as
// the tool's own refusal, and a message for the tool's logs. Find it with
// errors.As, so wrapping with %w keeps it. Refuse and the constructors named
// after each code make one.
type CodedError struct {
	// Code is one of the refusal codes (see RefusalCodes). Another code is
	// served as an unclassified 500.
	Code string
	// Message says why; garmd never shows it to the caller. Empty, the code
	// stands in for it.
	Message string
}

// Error returns the message. A nil *CodedError has an empty message, so an
// error that holds one cannot panic whoever prints it.
func (e *CodedError) Error() string {
	if e == nil {
		return ""
	}
	return e.Message
}
