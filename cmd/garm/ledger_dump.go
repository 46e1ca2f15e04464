package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	ledgerv1 "github.com/garm-dev/garm/gen/garm/ledger/v1"
	"github.com/garm-dev/garm/internal/atomicfile"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/sealer"
	"google.golang.org/protobuf/proto"
)

// runLedgerDump is garm ledger dump: the rows and heads of the bus as the
// files garm ledger verify --rows --heads reads, so they can be checked
// elsewhere, later, or by someone without access to the bus.
func runLedgerDump(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src ledgerSource
	fs.StringVar(&src.natsURL, "nats", os.Getenv("GARM_NATS"), "the bus's `url` ($GARM_NATS); required")
	fs.StringVar(&src.nkey, "nats-nkey", "", "the bus identity: an nkey seed `file`")
	rowsOut := fs.String("rows", "", "write the rows to this `file`; required")
	headsOut := fs.String("heads", "", "write the heads to this `file`; required")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if src.natsURL == "" || *rowsOut == "" || *headsOut == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: garm ledger dump --nats URL --rows FILE --heads FILE")
		return exitUsage
	}
	nc, js, err := src.connect()
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger dump:", err)
		return exitFailed
	}
	defer nc.Close()
	// Heads first: every row they cover is then on the stream when the
	// rows are read.
	heads, err := sealer.ReadHeads(ctx, js)
	if err == nil {
		err = atomicfile.WriteFrom(*headsOut, 0o600, func(w io.Writer) error {
			for _, h := range heads {
				if h.Err != nil {
					return fmt.Errorf("head message %d: %w", h.Seq, h.Err)
				}
				b, err := json.Marshal(h.Head)
				if err != nil {
					return err
				}
				if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger dump: heads:", err)
		return exitFailed
	}
	var n uint64
	err = atomicfile.WriteFrom(*rowsOut, 0o600, func(w io.Writer) error {
		return rows.ScanStream(ctx, js, func(r rows.Row) error {
			b, err := proto.Marshal(&ledgerv1.Batch{Events: []*ledgerv1.Event{r.Event}})
			if err == nil {
				_, err = w.Write(b)
			}
			n++
			return err
		})
	})
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger dump: rows:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "%d rows to %s, %d heads to %s\n", n, *rowsOut, len(heads), *headsOut)
	return exitOK
}
