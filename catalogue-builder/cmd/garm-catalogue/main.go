// Command garm-catalogue is ./catalogue-builder under the name it is
// installed as: `go install github.com/garm-dev/garm/catalogue-builder/cmd/garm-catalogue`.
package main

import (
	"os"

	"github.com/garm-dev/garm/catalogue-builder/cli"
)

func main() { os.Exit(cli.Run()) }
