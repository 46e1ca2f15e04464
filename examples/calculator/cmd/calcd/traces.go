package main

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// tracerProvider is the provider the standard OTEL_* variables describe,
// exporting over OTLP (http/protobuf, or grpc when
// OTEL_EXPORTER_OTLP_PROTOCOL says so), or nil when they name no endpoint:
// calcd then traces nothing. The caller shuts it down, which flushes it.
//
// This is what a tool author writes to trace a tool: garmtool starts each
// request's span, the child of garmd's, on the provider it is given.
func tracerProvider(ctx context.Context) (*sdktrace.TracerProvider, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	if os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("calcd"), semconv.ServiceVersion(version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
