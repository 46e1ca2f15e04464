package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/garm-dev/garm/daemon/internal/tracing/otlphttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) names none.
const DefaultServiceName = "garmd"

// FromEnv is the tracer provider the standard OTEL_* variables describe,
// exporting over OTLP: http/protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL
// (or its _TRACES_ form) says grpc. It is nil, with no error, when no
// endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_SDK_DISABLED is true, or
// OTEL_TRACES_EXPORTER is none: tracing is then off. The exporter reads
// the endpoint and headers (over http/protobuf it is garmd's own, package
// otlphttp, which refuses a variable it cannot read), the provider the
// sampler and its argument, the resource the service name and resource
// attributes, and garmd's Batcher the OTEL_BSP_* limits, each from its own
// variable; version is service.version. The Batcher is returned too, for the spans it drops
// (garmd's garm_spans_dropped_total).
func FromEnv(ctx context.Context, version string) (*sdktrace.TracerProvider, *Batcher, error) {
	return fromLookup(ctx, version, os.LookupEnv)
}

func fromLookup(ctx context.Context, version string, lookup func(string) (string, bool)) (*sdktrace.TracerProvider, *Batcher, error) {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(get("OTEL_TRACES_EXPORTER"), "none") {
		return nil, nil, nil
	}
	if get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && get("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return nil, nil, nil
	}
	protocol := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch protocol {
	case "", "http/protobuf":
		var cfg otlphttp.Config
		if cfg, err = otlphttp.ConfigFromEnv(lookup); err == nil {
			exp, err = otlphttp.New(cfg, "garmd/"+version)
		}
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: garmd exports traces over http/protobuf or grpc", protocol)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the OTLP trace exporter: %w", err)
	}
	// The variables come last: OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES override garmd's defaults.
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName), semconv.ServiceVersion(version)),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	batcher := NewBatcher(exp, BatchLimitsFromEnv(lookup))
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(batcher), sdktrace.WithResource(res)), batcher, nil
}
