package garmd

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/garm-dev/garm/daemon/internal/tracing"
)

// traceProvider is what garmd does with its tracer provider at shutdown.
type traceProvider struct {
	// flush exports what is buffered; nil when the provider cannot.
	flush func(context.Context) error
	// shutdown, for a provider garmd built, also stops it.
	shutdown func(context.Context) error
	// dropped counts the spans garmd's own exporter dropped; nil for a
	// provider handed to garmd, whose drops are its owner's to count.
	dropped func() uint64
}

// openTracing sets up the spans of every call (docs/decisions/0060): the
// provider given in the config, else the one the OTEL_* variables
// describe, else none. With a provider, log lines of a call carry its
// trace_id and span_id.
func (d *Daemon) openTracing(ctx context.Context) error {
	var tp trace.TracerProvider = d.cfg.TracerProvider
	if tp != nil {
		if f, ok := tp.(interface{ ForceFlush(context.Context) error }); ok {
			d.traces.flush = f.ForceFlush
		}
	} else {
		sdk, batcher, err := tracing.FromEnv(ctx, Version())
		if err != nil {
			return err
		}
		if sdk == nil {
			return nil
		}
		tp = sdk
		d.traces.flush, d.traces.shutdown, d.traces.dropped = sdk.ForceFlush, sdk.Shutdown, batcher.Dropped
		// What the exporter and the batcher fail at or lose (a collector
		// away, spans dropped) goes to garmd's log, not to a bare line on
		// stderr. Only for the provider garmd built: a program that hands
		// garmd its own keeps its own handler.
		logger := d.logger
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("garmd: traces", "err", err.Error())
		}))
	}
	var shape []tracing.Option
	if d.cfg.TraceSteps {
		shape = append(shape, tracing.WithStepSpans())
	}
	d.tracer = tracing.New(tp, Version(), shape...)
	d.logger = slog.New(tracing.LogHandler(d.logger.Handler()))
	return nil
}

// flushTraces exports the spans still buffered: at shutdown, after the
// ledger, so a call's trace is not lost before its row.
func (d *Daemon) flushTraces(ctx context.Context) {
	p := d.traces
	d.traces = traceProvider{}
	if p.shutdown != nil {
		if err := p.shutdown(ctx); err != nil {
			d.logger.Error("garmd: traces did not flush whole", "err", err)
		}
		return
	}
	if p.flush != nil {
		if err := p.flush(ctx); err != nil {
			d.logger.Error("garmd: traces did not flush whole", "err", err)
		}
	}
}
