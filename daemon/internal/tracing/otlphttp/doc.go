// Package otlphttp is garmd's OTLP/HTTP trace exporter: the spans of a
// batch written straight into the protobuf of an ExportTraceServiceRequest
// and posted to the receiver the standard OTEL_EXPORTER_OTLP_* variables
// name. It sends what the SDK's otlptracehttp exporter sends (a test holds
// the two equal, message for message) without building each span,
// attribute and value as a generated message and marshalling them, which
// was most of what tracing every call cost garmd (docs/decisions/0149).
// The SDK still records the spans; the gRPC exporter is still the SDK's.
package otlphttp
