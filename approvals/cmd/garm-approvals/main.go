// Command garm-approvals is the approvals service: approvers sign in with the organisation's
// OpenID Connect provider and approve or deny the calls garmd holds for a grant. It only turns
// flags into an approvals.ServeConfig; everything else is package approvals.
//
//	garm-approvals --base-url <url> --key <pem> --grant-audience <aud> \
//	  --oidc-issuer <iss> --oidc-client-id <id> --nats <url> [--nats-creds|--nats-nkey|--nats-user-file <file>] \
//	  [--nats-tls-ca <pem> [--nats-tls-cert <pem> --nats-tls-key <pem>]] [flags]
//	garm-approvals --config <file.yaml> [flags]
//	garm-approvals config [--config <file.yaml>] [flags]
//	garm-approvals version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/deploy/configfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// run parses args into a configuration and serves it, answering the exit code: 2 for flags
// that do not make a valid configuration, 1 for a failure while serving.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "config":
			return printConfig(args[1:], stderr)
		case "version":
			fmt.Fprintln(stdout, "garm-approvals", approvals.Version())
			return 0
		}
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "garm-approvals:", err)
		}
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.Logger = logger
	err = approvals.Serve(ctx, cfg, func(a net.Addr) { logger.Info("garm-approvals: serving", "addr", a.String(), "base_url", cfg.BaseURL) })
	if err != nil {
		fmt.Fprintln(stderr, "garm-approvals:", err)
		return 1
	}
	return 0
}

// parseFlags turns args, the environment's secret paths and the --config file into a validated
// configuration (config.go); every problem is reported at once.
func parseFlags(args []string, stderr io.Writer) (approvals.ServeConfig, error) {
	return parse(args, stderr, false)
}

func parse(args []string, stderr io.Writer, printing bool) (approvals.ServeConfig, error) {
	var c approvals.ServeConfig
	var secretFile string
	fs := flag.NewFlagSet("garm-approvals", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", approvals.DefaultListen, "the HTTP listener's `address`")
	fs.StringVar(&c.BaseURL, "base-url", "", "where approvers reach the service (garmd's --approvals-url), no trailing slash")
	fs.StringVar(&c.KeyFile, "key", "", "the grant signing key: a PEM PKCS#8 P-256 (ES256) or Ed25519 (EdDSA) private key `file`")
	fs.StringVar(&c.GrantIssuer, "grant-issuer", "", "the iss of every grant, garmd's --grant-issuer (default: --base-url)")
	fs.StringVar(&c.GrantAudience, "grant-audience", "", "the aud of every grant, garmd's grant audience")
	fs.DurationVar(&c.GrantTTL, "grant-ttl", 0, "cap a grant's life below its tool's max_grant_age_seconds")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", "", "the approvers' OpenID Connect issuer")
	fs.StringVar(&c.OIDCDiscoveryURL, "oidc-discovery-url", "", "fetch discovery here when the issuer is not where it serves (default: --oidc-issuer)")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", approvals.DefaultOIDCClientID, "the service's client id at the identity provider")
	fs.StringVar(&c.SubjectClaim, "subject-claim", "", "the ID-token `claim` whose value is the approver's garm subject, as garmd's tokens spell it in sub (\"sub\" when the two agree); required")
	fs.StringVar(&secretFile, "oidc-client-secret-file", "", "a `file` holding the client secret, for a confidential client")
	fs.DurationVar(&c.SessionTTL, "session-ttl", approvals.DefaultSessionTTL, "bound a session (it never outlives the ID token)")
	fs.IntVar(&c.MaxSessions, "max-sessions", approvals.DefaultMaxSessions, "bound the sessions held at once; beyond it sign-ins are refused")
	fs.IntVar(&c.MaxSessionsPerApprover, "max-sessions-per-approver", approvals.DefaultMaxSessionsPerApprover, "bound the sessions one approver holds; beyond it their own oldest ends")
	c.Bus.Register(fs) // garmd's connection flags: --nats, credentials and TLS files
	fs.StringVar(&c.NATSInboxPrefix, "nats-inbox-prefix", approvals.DefaultInboxPrefix, "the `prefix` of its reply subjects, as its bus permissions allow")
	fileProblems, err := configfile.Parse(fs, args, secretPathEnv, os.Getenv)
	if err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if printing {
		if err := configfile.Effective(stdout, fs); err != nil {
			return c, err
		}
	}
	var problems []error
	for _, p := range fileProblems {
		problems = append(problems, errors.New(p))
	}
	if secretFile != "" {
		secret, err := os.ReadFile(secretFile)
		if err != nil {
			problems = append(problems, fmt.Errorf("--oidc-client-secret-file: %w", err))
		}
		c.OIDCClientSecret = strings.TrimSpace(string(secret))
	}
	problems = append(problems, c.Validate())
	return c, errors.Join(problems...)
}
