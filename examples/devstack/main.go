package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/garm-dev/garm/devkit/devplane"
)

// closeTimeout bounds the whole shutdown after SIGINT or SIGTERM; a second
// signal ends the process at once.
const closeTimeout = time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, stop, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		os.Exit(1)
	}
}

// run starts the stack, prints the quick-start and serves until ctx is
// done (or a component fails), then shuts the stack down. stopSignals is
// called once shutdown begins, so a second signal is not caught.
func run(ctx context.Context, stopSignals func(), args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	stack, err := Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, stack.QuickStart())

	failed := make(chan error, 1)
	go func() { failed <- stack.Wait() }()
	var runErr error
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "devstack: shutting down (a second Ctrl-C stops at once)")
	case runErr = <-failed:
	}
	stopSignals()
	closeCtx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return errors.Join(runErr, stack.Close(closeCtx))
}

// parseFlags turns the command line into Options, refusing what Validate
// refuses: above all, a listener off loopback.
func parseFlags(args []string, stdout, stderr io.Writer) (Options, error) {
	o := DefaultOptions()
	flags := flag.NewFlagSet("devstack", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: go run ./examples/devstack [flags]\n\n"+
			"Runs the whole plane on loopback (NATS with JetStream, the dev identity provider,\n"+
			"the bank and calculator tools, garmd) and prints a quick-start. Flags:")
		flags.PrintDefaults()
	}
	applyPorts := devplane.ListenFlags(flags, &o)
	flags.StringVar(&o.DataDir, "data", "", "keep JetStream's store in this `directory` across runs (default: a temporary one, removed at exit)")
	flags.StringVar(&o.Catalogue, "catalogue-manifest", "", "build the catalogue from this catalogue.yaml `file` (default: the bank's); the calculator is added")
	flags.StringVar(&o.Personas, "personas", "", "the dev identity provider's persona `file` (default: the bank's)")
	cluster := flags.Bool("cluster", false, "run a three-node NATS cluster with R3 state and two garmd replicas behind a round-robin front, each a process of its own (make cluster)")
	flags.StringVar(&o.NATSServerBinary, "nats-server", "", "with --cluster, run each node as a process of this nats-server `binary` (default: .tmp/bin/nats-server, which make nats-server builds)")
	flags.StringVar(&o.GarmdBinary, "garmd", "", "with --cluster, run each replica as a process of this garmd `binary` (default: .tmp/bin/garmd, which make garmd builds)")
	ledger := flags.Bool("ledger", false, "print each ledger row as it lands on GARM_LEDGER")
	traces := flags.Bool("traces", false, "trace every call: print its span tree, or export it over OTLP to OTEL_EXPORTER_OTLP_ENDPOINT when that is set")
	flags.BoolVar(&o.Verbose, "verbose", false, "log at info level (default: warnings and errors)")
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	if flags.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if err := applyPorts(); err != nil {
		return o, err
	}
	if *ledger {
		o.Ledger = stdout
	}
	if *traces {
		o.Traces = stdout
	}
	if *cluster {
		o.Nodes, o.Replicas = ClusterNodes, ClusterReplicas
		if err := clusterBinaries(&o); err != nil {
			return o, err
		}
	}
	o.Logs = stderr
	return o, o.ValidateListeners()
}
