package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// SemconvVersion is the version of the OpenTelemetry semantic conventions
// whose names these spans use. The GenAI and MCP keys left the Go semconv
// packages after v1.41.0; they are declared here with the names v1.41.0
// gives them (docs/decisions/0060).
const SemconvVersion = "1.41.0"

// The GenAI and MCP keys, as semantic conventions v1.41.0 names them.
const (
	GenAIOperationNameKey = attribute.Key("gen_ai.operation.name")
	GenAIToolNameKey      = attribute.Key("gen_ai.tool.name")
	MCPMethodNameKey      = attribute.Key("mcp.method.name")
	MCPProtocolVersionKey = attribute.Key("mcp.protocol.version")
)

// garm's own keys.
const (
	// OutcomeKey is the call's outcome as the ledger spells it: ok,
	// denied, error.
	OutcomeKey = attribute.Key("garm.outcome")
	// EventIDKey is the ledger row's event id: a trace and a row find each
	// other by it.
	EventIDKey = attribute.Key("garm.event_id")
	// DigestKey is the catalogue generation the call was decided against.
	DigestKey = attribute.Key("garm.catalogue.digest")
	// VersionKey is garmd's version.
	VersionKey = attribute.Key("garm.version")
	// SurfaceKey is what the call arrived on: http or mcp.
	SurfaceKey = attribute.Key("garm.surface")
	// TokenCacheHitKey says whether authentication found the token in the
	// verified-token cache.
	TokenCacheHitKey = attribute.Key("garm.authn.token_cache_hit")
	// ToolFQNKey is the tool's fully qualified name on the tool's own span.
	ToolFQNKey = attribute.Key("garm.tool.fqn")
	// RefusalCodeKey is the code a tool answered with (a refusal or a
	// failure), on the tool's own span.
	RefusalCodeKey = attribute.Key("garm.tool.refusal_code")
)

// Values of the operation and messaging attributes.
var (
	operationExecuteTool = GenAIOperationNameKey.String("execute_tool")
	messagingNATS        = semconv.MessagingSystemKey.String("nats")
	messagingSend        = semconv.MessagingOperationTypeSend
	messagingRequest     = semconv.MessagingOperationNameKey.String("request")
)

// errorTypeKey is error.type: the wire code of a refusal or failure.
const errorTypeKey = semconv.ErrorTypeKey
