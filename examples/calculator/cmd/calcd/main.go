// Command calcd serves the example calculator's tools (calc.v1.Calculator)
// on NATS with runtime/garmtool.
//
//	calcd [--nats nats://127.0.0.1:4222] [--concurrency 4] [--drain-timeout 30s]
//	      [--nats-creds F | --nats-nkey F | --nats-user-file F]
//	      [--nats-tls-ca F] [--nats-tls-cert F --nats-tls-key F]
//
// On a secured bus it connects with one of the credential files and TLS,
// the same flags garmd takes (docs/operators.md, "Securing the bus").
//
// With OTEL_EXPORTER_OTLP_ENDPOINT set it exports a span per call over
// OTLP, configured by the standard OTEL_* variables (docs/operators.md,
// "Tracing").
//
// It logs to stderr, keeps reconnecting to NATS for as long as it runs
// (starting even when the server is not up yet), and on SIGINT or SIGTERM
// stops taking calls and lets running ones finish, for up to the drain
// timeout, before it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
)

// version is calcd's own version, published on $SRV.INFO.
const version = "0.1.0"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "calcd:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done, then drains and returns.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	flags := flag.NewFlagSet("calcd", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var bus garmtool.BusFlags
	bus.Register(flags)
	concurrency := flags.Int("concurrency", garmtool.DefaultConcurrency, "calls per tool handled at once")
	drainTimeout := flags.Duration("drain-timeout", garmtool.DefaultDrainTimeout, "how long running calls may take to finish after SIGINT or SIGTERM")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}

	secured, err := bus.ConnectOptions()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	logger.Info("calcd: connecting to NATS", "url", redacted(bus.URL), "auth", bus.Authentication(), "tls", bus.TLSCA != "" || strings.HasPrefix(bus.URL, "tls://"))
	nc, err := nats.Connect(bus.URL, append(append(secured,
		nats.Name("calcd"),
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true)),
		busEvents(logger)...)...)
	if err != nil {
		return fmt.Errorf("connecting to NATS: %w", err)
	}
	defer nc.Close()

	opts := []garmtool.Option{
		garmtool.WithConcurrency(*concurrency),
		garmtool.WithDrainTimeout(*drainTimeout),
		garmtool.WithLogger(logger),
	}
	tp, err := tracerProvider(ctx)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	if tp != nil {
		// Flushed once the last call has drained.
		defer func() { _ = tp.Shutdown(context.WithoutCancel(ctx)) }()
		opts = append(opts, garmtool.WithTracerProvider(tp))
	}
	svc := garmtool.New("calcd", version, opts...)
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		return err
	}
	return svc.Run(ctx, nc)
}

// busEvents log what happens to calcd's connection. nats.go calls the
// disconnect handler with nil when the connection is closed on purpose, as
// at every shutdown: that is no loss and is not logged as one.
func busEvents(logger *slog.Logger) []nats.Option {
	return []nats.Option{
		nats.ConnectHandler(func(nc *nats.Conn) {
			logger.Info("calcd: connected to NATS", "url", nc.ConnectedUrlRedacted())
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err == nil {
				return
			}
			logger.Warn("calcd: disconnected from NATS; reconnecting", "error", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("calcd: reconnected to NATS", "url", nc.ConnectedUrlRedacted())
		}),
	}
}

// redacted is the server list with any password hidden, for logging.
func redacted(servers string) string {
	parts := strings.Split(servers, ",")
	for i, part := range parts {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil {
			parts[i] = "<unparseable>"
			continue
		}
		if u.User != nil {
			u.User = url.User(u.User.Username())
		}
		parts[i] = u.String()
	}
	return strings.Join(parts, ",")
}
