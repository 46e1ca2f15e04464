package main

import (
	"context"
	"fmt"
	"io"
)

// runNew scaffolds; see scaffold.go.
func runNew(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "garm new: not yet")
	return exitFailed
}
