package toolbind

import "slices"

// The codes a tool may refuse with. garmd passes a refusal with one of them
// to its caller as the tool's own refusal (its status is the code); the
// runtime publishes any other code as an unclassified 500, which garmd
// treats as its own internal failure.
const (
	// CodeBadRequest: the request is well-formed but its values are not
	// acceptable to the tool.
	CodeBadRequest = "400"
	// CodeForbidden: the tool will not do this for this invocation.
	CodeForbidden = "403"
	// CodeNotFound: what the request names does not exist.
	CodeNotFound = "404"
	// CodeConflict: the request conflicts with the current state.
	CodeConflict = "409"
	// CodeUnsupportedMediaType: content the request carries is of a kind the
	// tool does not accept.
	CodeUnsupportedMediaType = "415"
	// CodeUnprocessableEntity: the request is understood but has no answer
	// (dividing by zero).
	CodeUnprocessableEntity = "422"
	// CodeTooManyRequests: the tool is overloaded or rate-limited; a later
	// call may succeed.
	CodeTooManyRequests = "429"
	// CodeBadGateway: something the tool depends on failed.
	CodeBadGateway = "502"
	// CodeGatewayTimeout: something the tool depends on did not answer in
	// time.
	CodeGatewayTimeout = "504"
)

// refusalCodes is in ascending order; RefusalCodes hands out copies so no
// caller can change what IsRefusalCode accepts.
var refusalCodes = []string{
	CodeBadRequest, CodeForbidden, CodeNotFound, CodeConflict, CodeUnsupportedMediaType,
	CodeUnprocessableEntity, CodeTooManyRequests, CodeBadGateway, CodeGatewayTimeout,
}

// RefusalCodes returns the codes a tool may refuse with, in ascending order.
func RefusalCodes() []string { return slices.Clone(refusalCodes) }

// IsRefusalCode reports whether code is one of the RefusalCodes.
func IsRefusalCode(code string) bool { return slices.Contains(refusalCodes, code) }

// Refuse returns a CodedError with code and message. It does not check the
// code: serving a code outside RefusalCodes publishes an unclassified 500.
func Refuse(code, message string) error { return &CodedError{Code: code, Message: message} }

// BadRequest refuses with CodeBadRequest.
func BadRequest(message string) error { return Refuse(CodeBadRequest, message) }

// Forbidden refuses with CodeForbidden.
func Forbidden(message string) error { return Refuse(CodeForbidden, message) }

// NotFound refuses with CodeNotFound.
func NotFound(message string) error { return Refuse(CodeNotFound, message) }

// Conflict refuses with CodeConflict.
func Conflict(message string) error { return Refuse(CodeConflict, message) }

// UnsupportedMediaType refuses with CodeUnsupportedMediaType.
func UnsupportedMediaType(message string) error { return Refuse(CodeUnsupportedMediaType, message) }

// UnprocessableEntity refuses with CodeUnprocessableEntity.
func UnprocessableEntity(message string) error { return Refuse(CodeUnprocessableEntity, message) }

// TooManyRequests refuses with CodeTooManyRequests.
func TooManyRequests(message string) error { return Refuse(CodeTooManyRequests, message) }

// BadGateway refuses with CodeBadGateway.
func BadGateway(message string) error { return Refuse(CodeBadGateway, message) }

// GatewayTimeout refuses with CodeGatewayTimeout.
func GatewayTimeout(message string) error { return Refuse(CodeGatewayTimeout, message) }
