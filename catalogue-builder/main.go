// Command garm-catalogue builds, lints, inspects, diffs and publishes garm
// catalogue artifacts: the one file garmd loads to learn its tools. Run
// `go run ./catalogue-builder --help` for its commands; design 6 is the
// contract. `go install ./catalogue-builder/cmd/garm-catalogue` installs the
// same command under its own name.
package main

import (
	"os"

	"github.com/garm-dev/garm/catalogue-builder/cli"
)

func main() { os.Exit(cli.Run()) }
