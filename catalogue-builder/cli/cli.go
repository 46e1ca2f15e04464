package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/garm-dev/garm/internal/buildversion"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitRefused = 1
	ExitUsage   = 2
)

// version is the release, set at link time with
// -ldflags "-X github.com/garm-dev/garm/catalogue-builder/cli.version=v1.2.3";
// left empty, the module version the binary was built from is used.
var version string

// Version is garm-catalogue's version: the one set at link time, else the
// module version recorded in the binary, else "dev".
func Version() string { return buildversion.Resolve(version) }

// Producer is what an artifact records as having written it.
func Producer() string { return "garm-catalogue/" + Version() }

// command is one subcommand.
type command struct {
	name    string
	usage   string // the arguments after the command name
	summary string
	run     func(ctx context.Context, env *env, args []string) int
}

// env is where a command writes.
type env struct {
	// prog is the command line's name in messages: "garm-catalogue", or
	// "garm catalogue" under garm.
	prog           string
	stdout, stderr io.Writer
}

func commands() []command {
	return []command{
		{"build", "[-f catalogue.yaml] [-o catalogue.binpb] [--image <file> [--source <text>]] [--stamp] [--sign-key <file> --version <n> [--name <name>]]", "compile, lint and write the catalogue artifact, signed if asked", runBuild},
		{"lint", "[-f catalogue.yaml] [--image <file>]", "the same checks as build, writing nothing", runLint},
		{"inspect", "<artifact> [--json] [--catalogue-keys <jwks>]", "show an artifact's digest, signatures, provenance, taxonomy and tools", runInspect},
		{"diff", "<old> <new> [--fail-on-widening] [--catalogue-keys <jwks>]", "the policy difference between two artifacts, widening first, and their signers", runDiff},
		{"publish", "<artifact> s3://bucket/key [--unsigned]", "upload an artifact and its signatures to S3 or a compatible store", runPublish},
		{"keygen", "--key <file> [--public <file>] [--alg EdDSA|ES256] [--group <group>]", "make a catalogue-signing key", runKeygen},
		{"keys", keysUsage, "write the catalogue key set garmd verifies signatures with", runKeys},
		{"sign", "<artifact> --key <file> [--version <n>] [--name <name>]", "sign an artifact, or add a signature to its statement", runSign},
		{"nats-permissions", "<artifact> [--format conf|json] [--approvals]", "the least-privilege NATS permissions of garmd, each tool package and (--approvals) the approvals service", runNATSPermissions},
		{"version", "", "print garm-catalogue's version", runVersion},
	}
}

// Run is the process: the command line from os.Args, output to the
// standard streams, cancelled by an interrupt. It returns the exit code.
func Run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// Main runs the command line as garm-catalogue and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return MainAs(ctx, "garm-catalogue", args, stdout, stderr)
}

// MainAs runs the command line, naming itself prog in usage and messages
// (`garm catalogue` runs it as "garm catalogue"), and returns the exit
// code.
func MainAs(ctx context.Context, prog string, args []string, stdout, stderr io.Writer) int {
	e := &env{prog: prog, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		e.usage(stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		e.usage(stdout)
		return ExitOK
	case "--version":
		return runVersion(ctx, e, nil)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(stderr, "%s: unknown command %q\n\n", e.prog, args[0])
	e.usage(stderr)
	return ExitUsage
}

func (e *env) usage(w io.Writer) {
	fmt.Fprintf(w, "%s builds, checks and publishes garm catalogue artifacts.\n", e.prog)
	fmt.Fprintln(w, "\nUsage:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %s %-16s %s\n", e.prog, c.name, c.usage)
	}
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s <command> --help' for a command's flags.\n", e.prog)
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 refused, 2 usage.")
}

// flags is a command's flag set, printing its usage where asked.
func (e *env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse reads flags wherever they appear among the arguments and returns
// the positional ones; it returns the exit code to stop with, or -1 to go
// on. Exactly want positional arguments are required.
func (e *env) parse(fs *flag.FlagSet, args []string, want int) ([]string, int) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				e.commandUsage(e.stdout, fs)
				return nil, ExitOK
			}
			fmt.Fprintf(e.stderr, "%s %s: %v\n\n", e.prog, fs.Name(), err)
			e.commandUsage(e.stderr, fs)
			return nil, ExitUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		if args[0] == "--" {
			positional = append(positional, args[1:]...)
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	if len(positional) != want {
		fmt.Fprintf(e.stderr, "%s %s: want %d argument(s), got %d\n\n", e.prog, fs.Name(), want, len(positional))
		e.commandUsage(e.stderr, fs)
		return nil, ExitUsage
	}
	return positional, -1
}

func (e *env) commandUsage(w io.Writer, fs *flag.FlagSet) {
	for _, c := range commands() {
		if c.name != fs.Name() {
			continue
		}
		fmt.Fprintf(w, "Usage: %s %s %s\n\n%s.\n", e.prog, c.name, c.usage, upperFirst(c.summary))
	}
	var flags strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dashes := "--"
		if len(f.Name) == 1 {
			dashes = "-"
		}
		fmt.Fprintf(&flags, "  %s%s", dashes, f.Name)
		if name != "" {
			fmt.Fprintf(&flags, " <%s>", name)
		}
		fmt.Fprintf(&flags, "\n        %s", usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(&flags, " (default %s)", f.DefValue)
		}
		flags.WriteByte('\n')
	})
	if flags.Len() > 0 {
		fmt.Fprintf(w, "\nFlags:\n%s", flags.String())
	}
}

// refuse prints why a command refused and returns ExitRefused.
func (e *env) refuse(name string, err error) int {
	fmt.Fprintf(e.stderr, "%s %s: %v\n", e.prog, name, err)
	return ExitRefused
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func runVersion(_ context.Context, e *env, args []string) int {
	if _, code := e.parse(e.flags("version"), args, 0); code >= 0 {
		return code
	}
	fmt.Fprintln(e.stdout, Producer())
	return ExitOK
}
