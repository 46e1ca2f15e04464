// Command garmd is the governed tool plane's daemon. It only turns flags,
// a YAML --config file whose keys are the flags, and the environment
// variables that name secrets' files into a garmd.Config; everything else
// is package garmd.
//
//	garmd serve --catalogue <file> --issuer <iss> --jwks <url> --hash-key-file <file> [flags]
//	garmd serve --config <file.yaml> [flags]
//	garmd config [--config <file.yaml>] [flags]
//	garmd check --catalogue <file>
//	garmd version
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
