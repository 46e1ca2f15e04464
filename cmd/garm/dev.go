package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/garm-dev/garm/devkit/devplane"
)

const (
	// closeTimeout bounds the plane's shutdown after an interrupt.
	closeTimeout = time.Minute
	// watchEvery is how often garm dev looks for changed proto sources.
	watchEvery = 500 * time.Millisecond
)

// runDev runs the plane on the author's catalogue until interrupted,
// printing the quick-start, and reloads the catalogue when its sources
// change.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o := devplane.DefaultOptions()
	flags := flag.NewFlagSet("garm dev", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: garm dev [--catalogue MANIFEST|ARTIFACT] [--personas FILE] [flags]\n\n"+
			"Runs the plane on loopback on your catalogue: a secured NATS with JetStream, the dev identity\n"+
			"provider, and garmd with grants, notify, the ledger and MCP on. Your tool process connects\n"+
			"with the bus URL and seed it prints. Saving a .proto rebuilds the catalogue; one that does not\n"+
			"lint is reported and the previous one is kept. Flags:")
		flags.PrintDefaults()
	}
	flags.StringVar(&o.Catalogue, "catalogue", "catalogue.yaml", "the catalogue: a catalogue.yaml `manifest` (built, and watched) or a built artifact")
	flags.StringVar(&o.Personas, "personas", "personas.yaml", "the dev identity provider's persona `file`")
	applyPorts := devplane.ListenFlags(flags, &o)
	flags.StringVar(&o.DataDir, "data", "", "keep JetStream's store in this `directory` across runs")
	ledger := flags.Bool("ledger", true, "print each ledger row as it lands, with the code and detail of a refusal")
	flags.BoolVar(&o.Verbose, "verbose", false, "log at info level")
	if err := flags.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "garm dev: unexpected arguments %q\n", flags.Args())
		return exitUsage
	}
	if err := applyPorts(); err != nil {
		fmt.Fprintln(stderr, "garm dev:", err)
		return exitUsage
	}
	if *ledger {
		o.Ledger = stdout
	}
	o.Logs = stderr
	if err := o.Validate(); err != nil {
		fmt.Fprintln(stderr, "garm dev:", err)
		return exitUsage
	}
	if err := serveDev(ctx, o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "garm dev:", err)
		return exitFailed
	}
	return exitOK
}

// serveDev starts the plane, prints its quick-start and serves until ctx
// is done or a part fails.
func serveDev(ctx context.Context, o devplane.Options, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "garm dev: building %s and starting the plane…\n", o.Catalogue)
	plane, err := devplane.Start(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, plane.QuickStart())
	go plane.Watch(ctx, watchEvery, func() {
		fmt.Fprintf(stderr, "garm dev: the sources of %s changed; building…\n", o.Catalogue)
		if err := plane.Reload(ctx); err != nil {
			fmt.Fprintf(stderr, "garm dev: the new catalogue is refused; still serving the previous one:\n%v\n", err)
			return
		}
		fmt.Fprintf(stderr, "garm dev: serving the new catalogue (%d tools)\n", len(plane.Catalogue().Artifact.Tools()))
	})
	failed := make(chan error, 1)
	go func() { failed <- plane.Wait() }()
	var runErr error
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "garm dev: shutting down")
	case runErr = <-failed:
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return errors.Join(runErr, plane.Close(closeCtx))
}

// envOr is the environment variable's value, else def.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
