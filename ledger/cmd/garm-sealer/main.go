// Command garm-sealer is the verifiable ledger's sealer (docs/ledger.md,
// docs/decisions/0110): it reads GARM_LEDGER in order and publishes a
// signed tree head to GARM_LEDGER_HEADS at least every --every-rows rows
// or --every. It only turns flags into sealer.Options; everything else is
// package sealer. Run it under a service manager that restarts it: it
// resumes from the last head, and a second copy started by mistake cannot
// fork the chain.
//
//	garm ledger keygen --out sealer.pem
//	garm-sealer version
//	garm-sealer --nats <url> [--nats-creds|--nats-nkey|--nats-user-file <file>] \
//	  [--nats-tls-ca <pem> [--nats-tls-cert <pem> --nats-tls-key <pem>]] --key sealer.pem [--jwks-listen :8443]
package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/sealer"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// stdout is where `version` prints; a test swaps it.
var stdout io.Writer = os.Stdout

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run answers 2 for flags that make no sealer, 1 when sealing fails, 0
// when it was stopped.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "version" {
		fmt.Fprintln(stdout, "garm-sealer", sealer.Version())
		return 0
	}
	fs := flag.NewFlagSet("garm-sealer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var bus garmtool.BusFlags
	bus.Register(fs) // garmd's connection flags: --nats (required here), credentials and TLS files
	keyFile := fs.String("key", "", "the signing key: an Ed25519 PKCS #8 PEM `file` (garm ledger keygen); required")
	jwksListen := fs.String("jwks-listen", "", "serve the JWKS of the sealer's key (and --trusted-jwks's) at /.well-known/jwks.json on this `address`")
	trusted := fs.String("trusted-jwks", "", "a JWKS `file` of earlier sealer keys whose last head may be continued after a key rotation")
	o := sealer.Options{}
	fs.IntVar(&o.EveryRows, "every-rows", sealer.DefaultEveryRows, "publish a head once this many rows are unsealed")
	fs.DurationVar(&o.Every, "every", sealer.DefaultEvery, "publish a head when unsealed rows have waited this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	var problems []error
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "nats" })
	if !given || bus.URL == "" {
		problems = append(problems, errors.New("--nats is required"))
	}
	opts, err := bus.ConnectOptions()
	if err != nil {
		problems = append(problems, err)
	}
	if *keyFile == "" {
		problems = append(problems, errors.New("--key is required"))
	} else if s, err := head.LoadSigner(*keyFile); err != nil {
		problems = append(problems, fmt.Errorf("--key: %w", err))
	} else {
		o.Signer = s
	}
	if *trusted != "" {
		b, err := os.ReadFile(*trusted)
		if err == nil {
			o.Trusted, err = head.ParseJWKS(b)
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("--trusted-jwks: %w", err))
		}
	}
	if o.EveryRows <= 0 || o.Every <= 0 {
		problems = append(problems, errors.New("--every-rows and --every must be positive"))
	}
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	if err := errors.Join(problems...); err != nil {
		fmt.Fprintln(stderr, "garm-sealer cannot start:", err)
		return 2
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	opts = append(opts, nats.Name("garm-sealer"), nats.MaxReconnects(-1))
	nc, err := nats.Connect(bus.URL, opts...)
	if err != nil {
		fmt.Fprintln(stderr, "garm-sealer:", err)
		return 1
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Fprintln(stderr, "garm-sealer:", err)
		return 1
	}
	if *jwksListen != "" {
		pubs := []ed25519.PublicKey{o.Signer.Key.Public().(ed25519.PublicKey)}
		for _, pub := range o.Trusted {
			pubs = append(pubs, pub)
		}
		h, err := sealer.JWKSHandler(pubs...)
		if err != nil {
			fmt.Fprintln(stderr, "garm-sealer:", err)
			return 1
		}
		ln, err := net.Listen("tcp", *jwksListen)
		if err != nil {
			fmt.Fprintln(stderr, "garm-sealer: --jwks-listen:", err)
			return 1
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		o.Logger.Info("garm-sealer: serving the JWKS", "addr", ln.Addr().String(), "path", sealer.JWKSPath)
	}
	o.Logger.Info("garm-sealer: sealing", "kid", o.Signer.KeyID, "every_rows", o.EveryRows, "every", o.Every)
	if err := sealer.Run(ctx, js, o); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "garm-sealer:", err)
		return 1
	}
	return 0
}
