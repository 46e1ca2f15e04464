package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `benche2e measures garmd against a bare HTTP→NATS bridge and a direct NATS
request, each in processes of its own on loopback (make bench-e2e).

Usage:
  benche2e [run] --nats-server <bin> --garmd <bin> --calcd <bin> --catalogue <file> [flags]
  benche2e bridge --nats <url> --listen <addr>      (started by run)
  benche2e load --target <direct|http> ...          (started by run)

Run "benche2e run --help" for the flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benche2e:", err)
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, args []string) error {
	role := "run"
	if len(args) > 0 && (args[0] == "run" || args[0] == "bridge" || args[0] == "load") {
		role, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help") {
		fmt.Print(usage)
		return nil
	}
	switch role {
	case "bridge":
		return runBridge(ctx, args)
	case "load":
		return runLoad(ctx, args)
	}
	return runHarness(ctx, args)
}
