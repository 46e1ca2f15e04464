// Command garmd is the governed tool plane's daemon. It only turns flags
// into a garmd.Config; everything else is package garmd.
//
//	garmd serve --catalogue <file> --issuer <iss> --jwks <url> --hash-key-file <file> [flags]
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
