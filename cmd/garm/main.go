package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/garm-dev/garm/catalogue-builder/cli"
)

// Exit codes, as garm catalogue's.
const (
	exitOK     = cli.ExitOK
	exitFailed = cli.ExitRefused
	exitUsage  = cli.ExitUsage
)

// subcommand is one of garm's commands.
type subcommand struct {
	name, usage, summary string
	run                  func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func subcommands() []subcommand {
	return []subcommand{
		{"new", newUsage(newFlagSet(new(newOptions))), "scaffold a tool service: a Go module of its own", runNew},
		{"dev", "[--catalogue MANIFEST|ARTIFACT] [--personas FILE]", "run the whole plane on loopback on your catalogue", runDev},
		{"call", "TOOL --as PERSONA ['{json}']", "call a tool through garmd; show the status, event id, answer and ledger row", runCall},
		{"token", "PERSONA [--agent AGENT]", "print a token from the dev identity provider", runToken},
		{"idp", "--personas FILE [--listen ADDR] [--issuer URL]", "run the dev identity provider alone", runIdP},
		{"catalogue", "build|lint|inspect|diff|publish|keygen|keys|sign|nats-permissions|version", "build, sign and check catalogue artifacts (garm-catalogue)", runCatalogue},
		{"conformance", "toolservice --nats URL [--exec CMD]", "hold a tool service to the hop contract (docs/conformance.md)", runConformance},
		{"ledger", "verify|prove|dump|export|keygen|jwks", "check the ledger's rows against its signed heads; prove a row or a head; export it to a Parquet lake", runLedger},
		{"bus", busUsage, "create every stream and bucket garmd needs on the bus, fenced", runBus},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command line: the subcommand named first, with the rest.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range subcommands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "garm: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "garm is the tool author's command: scaffold, run the plane, call, build catalogues.\n\nUsage:")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  garm %-10s %s\n", c.name, c.usage)
	}
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'garm <command> --help' for a command's flags.")
}

// runCatalogue is garm-catalogue, the same code under garm's name.
func runCatalogue(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.MainAs(ctx, "garm catalogue", args, stdout, stderr)
}
