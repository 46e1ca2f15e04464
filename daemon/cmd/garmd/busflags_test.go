package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/runtime/garmtool"
)

// TestGarmdTakesTheBusFlagsToolsAndTheApprovalsServiceTake holds garmd's
// connection flags to garmtool.BusFlags, which garm-approvals, garm bus init
// and the tool services register: one recipe's flags serve every process on
// the bus (docs/operators.md, "A recipe").
func TestGarmdTakesTheBusFlagsToolsAndTheApprovalsServiceTake(t *testing.T) {
	t.Parallel()
	var cfg garmd.Config
	garmdFlags := busFlagNames(serveFlags(&cfg, io.Discard))
	shared := flag.NewFlagSet("shared", flag.ContinueOnError)
	new(garmtool.BusFlags).Register(shared)
	if want := busFlagNames(shared); !slices.Equal(garmdFlags, want) {
		t.Errorf("garmd's bus flags are %q, garmtool.BusFlags' are %q", garmdFlags, want)
	}
}

func busFlagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "nats" || strings.HasPrefix(f.Name, "nats-") {
			names = append(names, f.Name)
		}
	})
	return names
}
