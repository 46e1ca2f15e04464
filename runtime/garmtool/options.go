package garmtool

import (
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Defaults of the options New takes.
const (
	// DefaultConcurrency is how many requests per tool a Service handles at
	// once when WithConcurrency is not given (or given a non-positive n).
	DefaultConcurrency = 4
	// DefaultDrainTimeout is how long running handlers keep their context
	// after shutdown begins when WithDrainTimeout is not given (or given a
	// non-positive duration).
	DefaultDrainTimeout = 30 * time.Second
)

// An Option configures a Service; options are fixed when New returns.
type Option func(*options)

type options struct {
	concurrency    int
	logger         *slog.Logger
	drainTimeout   time.Duration
	tracerProvider trace.TracerProvider
}

func newOptions(opts []Option) options {
	o := options{concurrency: DefaultConcurrency, drainTimeout: DefaultDrainTimeout}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// WithConcurrency sets how many requests per tool are handled at once: the
// Service registers n micro service instances, each carrying every tool, all
// in the tools' queue groups, and each handles one request per tool at a
// time. A non-positive n means DefaultConcurrency.
func WithConcurrency(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.concurrency = n
		} else {
			o.concurrency = DefaultConcurrency
		}
	}
}

// WithLogger sets the logger the Service writes to: one line when it starts
// serving (with its effective configuration), one when it drains and stops,
// and one per request only for panics, failed answers and, at debug level,
// refusals the runtime itself makes. A nil logger is silent.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.logger = logger }
}

// WithDrainTimeout sets how long handlers still running when shutdown begins
// keep their context before it is cancelled. A non-positive d means
// DefaultDrainTimeout.
func WithDrainTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.drainTimeout = d
		} else {
			o.drainTimeout = DefaultDrainTimeout
		}
	}
}

// WithTracerProvider sets where the Service's spans go: one server span
// per request, the child of the trace context garmd sent, named for the
// tool and recording its outcome and refusal code. The handler's context
// carries the span, so a tool's own spans nest under it. nil, or not
// given, means the global provider (otel.GetTracerProvider), which records
// nothing until one is set.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracerProvider = tp }
}
