package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/garm-dev/garm/ledger/lake"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// runLedgerExport is garm ledger export: GARM_LEDGER's rows to a Parquet
// lake (docs/ledger.md, "Lake"). Without --once it runs until stopped, with
// a durable consumer; with --once it exports one stretch of the stream and
// returns.
func runLedgerExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bus garmtool.BusFlags
	bus.URL = os.Getenv("GARM_NATS")
	bus.Register(fs)
	to := fs.String("to", "", "the lake: `s3://bucket/prefix`, reached through the AWS SDK's default chain (AWS_ENDPOINT_URL for an S3-compatible store); required")
	o := lake.Options{}
	fs.StringVar(&o.Durable, "durable", lake.DefaultDurable, "the durable consumer's `name` on "+"GARM_LEDGER")
	fs.IntVar(&o.RollRows, "roll-rows", lake.DefaultRollRows, "close a file once it holds this many rows")
	fs.IntVar(&o.RollBytes, "roll-bytes", lake.DefaultRollBytes, "close a file once its rows take this many bytes on the stream")
	fs.DurationVar(&o.RollEvery, "roll-every", lake.DefaultRollEvery, "close a file once its first row has waited this long (at least "+lake.MinRollEvery.String()+")")
	once := fs.Bool("once", false, "export one stretch of the stream (--from-seq/--to-seq or --since/--until) and stop")
	var r lake.Range
	fs.Uint64Var(&r.From, "from-seq", 1, "with --once: the first stream message")
	fs.Uint64Var(&r.To, "to-seq", 0, "with --once: the last stream message (0: the last the stream holds)")
	since := fs.String("since", "", "with --once: the first message stored at or after this RFC 3339 `time`, instead of --from-seq")
	until := fs.String("until", "", "with --once and --since: the last message stored at or before this RFC 3339 `time`")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	opts, err := bus.ConnectOptions()
	var problems []error
	if err != nil {
		problems = append(problems, err)
	}
	if *to == "" {
		problems = append(problems, errors.New("--to is required"))
	}
	if o.RollRows <= 0 || o.RollBytes <= 0 {
		problems = append(problems, errors.New("--roll-rows and --roll-bytes must be positive"))
	}
	if o.RollEvery < lake.MinRollEvery {
		problems = append(problems, fmt.Errorf("--roll-every is %v; at least %v keeps the lake's file count bounded", o.RollEvery, lake.MinRollEvery))
	}
	for _, t := range []struct {
		flag string
		in   *string
		out  *time.Time
	}{{"--since", since, &r.Since}, {"--until", until, &r.Until}} {
		if *t.in == "" {
			continue
		}
		if *t.out, err = time.Parse(time.RFC3339Nano, *t.in); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", t.flag, err))
		}
	}
	if !*once && (*since != "" || *until != "" || r.To != 0 || r.From != 1) {
		problems = append(problems, errors.New("--from-seq, --to-seq, --since and --until go with --once"))
	}
	if *until != "" && *since == "" {
		problems = append(problems, errors.New("--until goes with --since"))
	}
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if err := errors.Join(problems...); err != nil {
		fmt.Fprintln(stderr, "garm ledger export:", err)
		return exitUsage
	}
	store, err := lake.OpenBucket(ctx, *to)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger export: --to:", err)
		return exitFailed
	}
	nc, err := nats.Connect(bus.URL, append(opts, nats.Name("garm ledger export"), nats.MaxReconnects(-1))...)
	if err != nil {
		fmt.Fprintf(stderr, "garm ledger export: connecting to %s: %v\n", bus.URL, err)
		return exitFailed
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger export:", err)
		return exitFailed
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	start := time.Now()
	var st lake.Stats
	if *once {
		st, err = lake.ExportRange(ctx, js, store, r, o)
	} else {
		o.Logger.Info("garm ledger export: exporting", "to", store.String(), "durable", o.Durable,
			"roll_rows", o.RollRows, "roll_bytes", o.RollBytes, "roll_every", o.RollEvery)
		st, err = lake.Export(ctx, js, store, o)
		if errors.Is(err, context.Canceled) {
			err = nil
		}
	}
	took := time.Since(start)
	fmt.Fprintf(stdout, "%d rows in %d files (%d ranges) to %s, through stream message %d, in %v (%.0f rows/s)\n",
		st.Rows, st.Objects, st.Ranges, store, st.Last, took.Round(time.Millisecond), float64(st.Rows)/max(took.Seconds(), 1e-9))
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger export:", err)
		return exitFailed
	}
	return exitOK
}
