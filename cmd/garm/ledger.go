package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/lake"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/ledger/verify"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// runLedger is garm ledger: the verifiable ledger's offline checks and its
// keys (docs/ledger.md).
func runLedger(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := map[string]func(context.Context, []string, io.Writer, io.Writer) int{
		"verify": runLedgerVerify,
		"prove":  runLedgerProve,
		"keygen": runLedgerKeygen,
		"jwks":   runLedgerJWKS,
		"dump":   runLedgerDump,
		"export": runLedgerExport,
	}
	if len(args) == 0 || verbs[args[0]] == nil {
		fmt.Fprintln(stderr, "usage: garm ledger verify|prove|dump|export|keygen|jwks [flags]\n\n"+
			"  verify  check rows against the signed heads: every row covered, no gap, edit or reorder\n"+
			"  prove   an inclusion proof for an event id, or a consistency proof between two heads\n"+
			"  dump    write the bus's rows and heads to files, for verify --rows --heads\n"+
			"  export  copy the rows to a Parquet lake on S3, partitioned by date and app\n"+
			"  keygen  write a new Ed25519 sealer key file\n"+
			"  jwks    print the JWKS of a sealer key, for verifiers")
		return exitUsage
	}
	return verbs[args[0]](ctx, args[1:], stdout, stderr)
}

// ledgerSource is where the rows and heads are read: the bus, or files.
type ledgerSource struct {
	natsURL, nkey, rowsFile, headsFile, lake string
}

func (s *ledgerSource) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.natsURL, "nats", os.Getenv("GARM_NATS"), "read rows and heads from the bus at `url` ($GARM_NATS)")
	fs.StringVar(&s.nkey, "nats-nkey", "", "the bus identity: an nkey seed `file`")
	fs.StringVar(&s.rowsFile, "rows", "", "read rows from a `file` of garm.ledger.v1.Batch messages, concatenated in stream order")
	fs.StringVar(&s.headsFile, "heads", "", "read heads from a `file` of JSON heads, one a line")
	fs.StringVar(&s.lake, "lake", "", "read rows from the lake garm ledger export wrote: `s3://bucket/prefix`, or a local directory it was copied to")
}

func (s *ledgerSource) check() error {
	if s.rowsFile != "" && s.lake != "" {
		return errors.New("read rows from --rows or from --lake, not both")
	}
	if s.natsURL == "" && (s.rowsFile == "" && s.lake == "" || s.headsFile == "") {
		return errors.New("name the bus (--nats), or where rows (--rows or --lake) and heads (--heads) are")
	}
	return nil
}

// offline says whether neither rows nor heads come from the bus.
func (s *ledgerSource) offline() bool {
	return (s.rowsFile != "" || s.lake != "") && s.headsFile != ""
}

// connect is a JetStream client of the bus, when rows or heads come from it.
func (s *ledgerSource) connect() (*nats.Conn, jetstream.JetStream, error) {
	if s.natsURL == "" || s.offline() {
		return nil, nil, nil
	}
	opts := []nats.Option{nats.Name("garm ledger")}
	if s.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(s.nkey)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, o)
	}
	nc, err := nats.Connect(s.natsURL, opts...)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// heads reads every head, named by where it was read.
func (s *ledgerSource) heads(ctx context.Context, js jetstream.JetStream) ([]verify.Head, error) {
	if s.headsFile == "" {
		stored, err := sealer.ReadHeads(ctx, js)
		if err != nil {
			return nil, err
		}
		out := make([]verify.Head, len(stored))
		for i, h := range stored {
			out[i] = verify.Head{Name: "head message " + strconv.FormatUint(h.Seq, 10), Head: h.Head, Err: h.Err}
		}
		return out, nil
	}
	b, err := os.ReadFile(s.headsFile)
	if err != nil {
		return nil, err
	}
	var out []verify.Head
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		h := verify.Head{Name: fmt.Sprintf("head on line %d of %s", i+1, s.headsFile)}
		h.Err = json.Unmarshal([]byte(line), &h.Head)
		out = append(out, h)
	}
	return out, nil
}

// scanRows calls fn with every row in order.
func (s *ledgerSource) scanRows(ctx context.Context, js jetstream.JetStream, fn func(rows.Row) error) error {
	if s.lake != "" {
		var store lake.Store = lake.Dir(s.lake)
		if strings.HasPrefix(s.lake, "s3://") {
			b, err := lake.OpenBucket(ctx, s.lake)
			if err != nil {
				return err
			}
			store = b
		}
		return lake.Scan(ctx, store, fn)
	}
	if s.rowsFile == "" {
		return rows.ScanStream(ctx, js, fn)
	}
	f, err := os.Open(s.rowsFile)
	if err != nil {
		return err
	}
	defer f.Close()
	return rows.ScanFile(f, fn)
}

func readKeys(path string) (head.Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return head.ParseJWKS(b)
}

// runLedgerVerify is garm ledger verify.
func runLedgerVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var src ledgerSource
	src.flags(fs)
	jwks := fs.String("jwks", "", "the sealer's public keys: a JWKS `file` (garm ledger jwks); required")
	allowTail := fs.Bool("allow-unsealed", false, "accept rows after the last head (the sealer has not reached them yet)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return exitOK
	} else if err != nil {
		return exitUsage
	}
	if err := src.check(); err != nil || *jwks == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "garm ledger verify: name --jwks, and the bus (--nats) or where rows (--rows or --lake) and heads (--heads) are")
		return exitUsage
	}
	keys, err := readKeys(*jwks)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger verify: --jwks:", err)
		return exitFailed
	}
	nc, js, err := src.connect()
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger verify:", err)
		return exitFailed
	}
	if nc != nil {
		defer nc.Close()
	}
	start := time.Now()
	heads, err := src.heads(ctx, js)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger verify: reading heads:", err)
		return exitFailed
	}
	v, err := verify.New(keys, heads)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger verify: FAILED:", err)
		return exitFailed
	}
	if err := src.scanRows(ctx, js, v.Row); err != nil {
		fmt.Fprintln(stderr, "garm ledger verify: FAILED:", err)
		return exitFailed
	}
	sum, err := v.Finish(*allowTail)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger verify: FAILED:", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "ok: %d rows, %d heads verified in %v", sum.Rows, sum.Heads, time.Since(start).Round(time.Millisecond))
	if sum.Last != nil {
		fmt.Fprintf(stdout, "; last head: size %d, root %s, signed %s", sum.Last.Size, sum.Last.Root, sum.Last.Time.UTC().Format(time.RFC3339))
	}
	if sum.Unsealed > 0 {
		fmt.Fprintf(stdout, "; %d rows after it not sealed yet", sum.Unsealed)
	}
	fmt.Fprintln(stdout)
	return exitOK
}

// runLedgerKeygen is garm ledger keygen.
func runLedgerKeygen(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the new key's `file` (PKCS #8 PEM, mode 0600; never overwritten); required")
	if err := fs.Parse(args); err != nil || *out == "" {
		fmt.Fprintln(stderr, "usage: garm ledger keygen --out FILE")
		return exitUsage
	}
	s, err := head.GenerateKeyFile(*out)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger keygen:", err)
		return exitFailed
	}
	fmt.Fprintln(stdout, s.KeyID)
	return exitOK
}

// runLedgerJWKS is garm ledger jwks.
func runLedgerJWKS(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garm ledger jwks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: garm ledger jwks KEY_FILE...  (the JWKS of every sealer key a verifier should accept)")
		return exitUsage
	}
	var pubs []ed25519.PublicKey
	for _, path := range fs.Args() {
		s, err := head.LoadSigner(path)
		if err != nil {
			fmt.Fprintln(stderr, "garm ledger jwks:", err)
			return exitFailed
		}
		pubs = append(pubs, s.Key.Public().(ed25519.PublicKey))
	}
	b, err := head.JWKS(pubs...)
	if err != nil {
		fmt.Fprintln(stderr, "garm ledger jwks:", err)
		return exitFailed
	}
	fmt.Fprintln(stdout, string(b))
	return exitOK
}
