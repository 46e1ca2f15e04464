package devplane

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Each in-process service's spans carry its own service.name, whatever
// OTEL_SERVICE_NAME says; a span no package claims is never garmd's.
func TestEachToolServicesSpansCarryItsOwnServiceName(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "everyone")
	ctx := context.Background()
	mem := tracetest.NewInMemoryExporter()
	x := &traceExport{exporter: mem}
	provider := func(name string) *sdktrace.TracerProvider {
		tp, err := x.provider(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return tp
	}
	garmdTP := provider(GarmdServiceName)
	tools := &toolTracers{fallback: provider(ToolsServiceName)}
	tools.route("bank.v1", provider("bank"))
	tools.route("bank.v1.cards", provider("bank cards"))
	tools.route("calc.v1", provider("calculator"))

	_, span := garmdTP.Tracer("garmd").Start(ctx, "execute_tool calc.v1.add")
	span.End()
	// As garmtool does: one tracer, taken once, for every span of the service.
	tracer := tools.Tracer("garmtool")
	for _, name := range []string{"calc.v1.add", "bank.v1.get_balance", "bank.v1.cards.freeze", "calc.v10.add", "calc.v1"} {
		ctx, span := tracer.Start(ctx, name)
		// A tool's own span, from the provider of the span its handler is given.
		_, child := span.TracerProvider().Tracer("handler").Start(ctx, "child of "+name)
		child.End()
		span.End()
	}
	want := map[string]string{
		"execute_tool calc.v1.add": GarmdServiceName,
		"calc.v1.add":              "calculator", "child of calc.v1.add": "calculator",
		"bank.v1.get_balance": "bank", "child of bank.v1.get_balance": "bank",
		"bank.v1.cards.freeze": "bank cards", "child of bank.v1.cards.freeze": "bank cards",
		"calc.v10.add": ToolsServiceName, "child of calc.v10.add": ToolsServiceName,
		"calc.v1": ToolsServiceName, "child of calc.v1": ToolsServiceName,
	}
	// The syncer hands each span over as it ends; shutting down would reset
	// the in-memory exporter.
	spans := mem.GetSpans()
	t.Cleanup(func() { _ = x.shutdown(ctx) })
	if len(spans) != len(want) {
		t.Fatalf("%d spans exported, want %d", len(spans), len(want))
	}
	for _, s := range spans {
		got, _ := s.Resource.Set().Value(semconv.ServiceNameKey)
		if got.AsString() != want[s.Name] {
			t.Errorf("%s: service.name %q, want %q", s.Name, got.AsString(), want[s.Name])
		}
	}
}
