package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/garm-dev/garm/conformance/toolservice"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// runConformance runs a conformance kit; only the tool-service kit is a
// subcommand (docs/conformance.md).
func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "toolservice" {
		fmt.Fprintln(stderr, "usage: garm conformance toolservice --nats URL [bus flags] [--service NAME] [--exec 'COMMAND ARGS…'] [--cases DIR] [--junit FILE]")
		return exitUsage
	}
	flags := flag.NewFlagSet("garm conformance toolservice", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var bus garmtool.BusFlags
	bus.Register(flags)
	service := flags.String("service", wire.ServiceName(toolservice.ContractService), "the micro service `name` discovery asks for")
	command := flags.String("exec", "", "start the service from this `command line` (split on spaces; NATS_URL is set for it), so drain and restart are checked too")
	casesDir := flags.String("cases", "", "run the case files of this `directory` instead of the shipped ones")
	junit := flags.String("junit", "", "also write the results as JUnit XML to this `file`")
	if err := flags.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "garm conformance toolservice: unexpected argument %q\n", flags.Arg(0))
		return exitUsage
	}
	cases, err := loadCases(*casesDir)
	if err != nil {
		fmt.Fprintln(stderr, "garm conformance toolservice:", err)
		return exitUsage
	}
	opts, err := bus.ConnectOptions()
	if err != nil {
		fmt.Fprintln(stderr, "garm conformance toolservice:", err)
		return exitUsage
	}
	nc, err := nats.Connect(bus.URL, append(opts, nats.Name("garm conformance"))...)
	if err != nil {
		fmt.Fprintln(stderr, "garm conformance toolservice:", err)
		return exitFailed
	}
	defer nc.Close()
	cfg := toolservice.Config{Conn: nc, Service: *service, Out: stdout}
	if words := strings.Fields(*command); len(words) > 0 {
		cfg.Start = startCommand(words, bus.URL, stderr)
	} else if err := toolservice.WaitReady(ctx, nc, *service, 5*time.Second); err != nil {
		fmt.Fprintln(stderr, "garm conformance toolservice:", err)
		return exitFailed
	}
	results, err := toolservice.Run(ctx, cfg, cases)
	if err != nil {
		fmt.Fprintln(stderr, "garm conformance toolservice:", err)
		return exitFailed
	}
	if *junit != "" {
		if err := writeJUnit(*junit, results); err != nil {
			fmt.Fprintln(stderr, "garm conformance toolservice:", err)
			return exitFailed
		}
	}
	if toolservice.Failed(results) {
		return exitFailed
	}
	return exitOK
}

func loadCases(dir string) ([]toolservice.Case, error) {
	if dir == "" {
		return toolservice.Shipped()
	}
	return toolservice.Load(os.DirFS(dir), ".")
}

func writeJUnit(path string, results []toolservice.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := toolservice.WriteJUnit(f, results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commandProcess is a service process the kit started.
type commandProcess struct{ cmd *exec.Cmd }

func (p commandProcess) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }
func (p commandProcess) Wait() error                     { return p.cmd.Wait() }
func (p commandProcess) Kill()                           { _ = p.cmd.Process.Kill() }

func startCommand(words []string, url string, stderr io.Writer) func(context.Context) (toolservice.Process, error) {
	return func(context.Context) (toolservice.Process, error) {
		cmd := exec.Command(words[0], words[1:]...)
		cmd.Env = append(os.Environ(), "NATS_URL="+url)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return commandProcess{cmd}, nil
	}
}
