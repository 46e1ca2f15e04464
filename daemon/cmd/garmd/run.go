package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	garmd "github.com/garm-dev/garm/daemon"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

const usage = `garmd is the governed tool plane's daemon.

Usage:
  garmd serve --catalogue <file|s3://bucket/key> --issuer <iss> --jwks <url> --hash-key-file <file> [flags]
  garmd serve --config <file.yaml> [flags]
  garmd config [--config <file.yaml>] [flags]
  garmd check --catalogue <file|s3://bucket/key> [--with-grants] [--with-notify] [--audit-retention <d>]
  garmd version

A --config file is YAML whose keys are serve's flags (issuer and jwks are
lists); flags override it. Secrets are files: GARMD_HASH_KEY_FILE,
GARMD_APPROVAL_STATE_KEY_FILE, GARMD_NATS_CREDS, GARMD_NATS_NKEY,
GARMD_NATS_USER_FILE, GARMD_NATS_TLS_KEY and GARMD_TLS_KEY name their paths,
between the file and the flags. "garmd config" prints the configuration serve
would run with, as such a file, and every problem with it.

Run "garmd <command> --help" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "check":
		return check(args[1:], stdout, stderr)
	case "config":
		return printConfig(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "garmd", garmd.Version())
		return exitOK
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "garmd: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// repeated is a flag that may be given many times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
func (r *repeated) Values() []string   { return *r }

// optionalDuration is a duration flag that stays nil until given.
type optionalDuration struct{ d **time.Duration }

func (o optionalDuration) String() string {
	if o.d == nil || *o.d == nil {
		return ""
	}
	return (*o.d).String()
}

func (o optionalDuration) Set(v string) error {
	parsed, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	*o.d = &parsed
	return nil
}

// serveFlags binds every `garmd serve` flag to cfg.
func serveFlags(cfg *garmd.Config, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("garmd serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.Catalogue, "catalogue", cfg.Catalogue, "the catalogue artifact to serve: a file path or s3://bucket/key, read with the AWS default chain (`location`, required)")
	fs.DurationVar(&cfg.CataloguePoll, "catalogue-poll", cfg.CataloguePoll, "how often an s3:// catalogue's ETag is polled for a new artifact (0 = read once at start; ignored for a file)")
	fs.StringVar(&cfg.CatalogueKeys, "catalogue-keys", cfg.CatalogueKeys, "verify the catalogue's signatures against this catalogue key set: a JWKS `file` or https URL, read afresh for every catalogue considered; unsigned, unknown-key, other-bytes or older catalogues are refused")
	fs.StringVar(&cfg.CatalogueName, "catalogue-name", cfg.CatalogueName, "serve only a catalogue signed under this `name` (with --catalogue-keys; default: the name signed on the catalogue garmd starts on, pinned for every reload)")
	fs.IntVar(&cfg.CatalogueMinSigners, "catalogue-min-signers", cfg.CatalogueMinSigners, "how many distinct catalogue keys must have signed (with --catalogue-keys; 0 = 1)")
	fs.Var(&cfg.CatalogueMinPerGroup, "catalogue-min-signers-group", "how many distinct keys of each key group must have signed, e.g. owners=1,security=1 (with --catalogue-keys)")
	fs.Uint64Var(&cfg.CatalogueAllowRollbackTo, "catalogue-allow-rollback-to", cfg.CatalogueAllowRollbackTo, "allow serving, once, this signed `version` lower than the highest served (with --catalogue-keys)")
	fs.StringVar(&cfg.NATS, "nats", cfg.NATS, "the bus to tools and JetStream: a `url`, or a comma-separated seed list of a cluster's servers' URLs (garmd starts when any answers)")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "the tool plane's `address`")
	fs.StringVar(&cfg.AdminListen, "admin-listen", cfg.AdminListen, "health, readiness and metrics `address`")
	fs.Var((*repeated)(&cfg.Issuers), "issuer", "a trusted token `issuer` (repeatable; paired by position with --jwks)")
	fs.Var((*repeated)(&cfg.JWKS), "jwks", "the key-set `url` of the issuer at the same position (repeatable)")
	fs.StringVar(&cfg.Audience, "audience", cfg.Audience, "what a token's aud must contain")
	fs.StringVar(&cfg.HashKeyFile, "hash-key-file", cfg.HashKeyFile, "`file` holding the HMAC key for hash redactions, at least 16 bytes (required)")
	fs.StringVar(&cfg.GrantIssuer, "grant-issuer", cfg.GrantIssuer, "turn on approval grants (step 5), trusting grants from this `issuer`")
	fs.StringVar(&cfg.GrantJWKS, "grant-jwks", cfg.GrantJWKS, "the grant issuer's key-set `url` (default: --jwks, when exactly one is given)")
	fs.StringVar(&cfg.GrantAudience, "grant-audience", cfg.GrantAudience, "what a grant's aud must contain (default: --audience)")
	fs.BoolVar(&cfg.Approvals, "approvals", cfg.Approvals, "record a call to a MODE_GRANT tool without a grant as a request for a human in the GARM_APPROVALS bucket, and take Garm-Approval (needs --grant-issuer and --approvals-url)")
	fs.StringVar(&cfg.ApprovalsURL, "approvals-url", cfg.ApprovalsURL, "the approvals inbox's public base `url`; a request's page is <url>/requests/<id>")
	fs.StringVar(&cfg.ApprovalStateKeyFile, "approval-state-key-file", cfg.ApprovalStateKeyFile, "`file` holding the HMAC key that protects MCP requestState (with --approvals and --mcp; every replica the same)")
	fs.Var(optionalDuration{&cfg.AuditStreamRetention}, "audit-stream-retention", "turn on the audit sink (GARM_AUDIT), asserting it keeps rows this `long` (0 = indefinitely)")
	fs.BoolVar(&cfg.Notify, "notify", cfg.Notify, "publish MODE_NOTIFY tools' rows to GARM_NOTIFY (step 10)")
	fs.BoolVar(&cfg.Limits, "limits", cfg.Limits, "count calls against their tools' limits on the GARM_LIMITS_* counter streams (garm bus init creates them)")
	fs.IntVar(&cfg.LimitReplicas, "limit-replicas", cfg.LimitReplicas, "how many garmd replicas serve: each admits its share of a soft limit while the bus is away")
	fs.DurationVar(&cfg.LimitBound, "limit-bound", cfg.LimitBound, "how long counting a call may take before a hard limit refuses it 503 limit_unavailable (0: 250ms)")
	fs.BoolVar(&cfg.LedgerStream, "ledger-stream", cfg.LedgerStream, "publish the ledger to GARM_LEDGER, falling back to the log")
	fs.DurationVar(&cfg.ToolTimeout, "tool-timeout", cfg.ToolTimeout, "the deadline of a call whose caller set none, and the ceiling on one it set")
	fs.IntVar(&cfg.MaxTools, "max-tools", cfg.MaxTools, "refuse a catalogue with more tools (0 = no limit)")
	fs.IntVar(&cfg.MinReplicas, "min-replicas", cfg.MinReplicas, "refuse to start unless every stream and bucket garmd uses has at least this many replicas (3 on a three-node cluster)")
	fs.DurationVar(&cfg.HeaderTimeout, "header-timeout", cfg.HeaderTimeout, "how long a caller may take to send a request's headers")
	fs.DurationVar(&cfg.BodyTimeout, "body-timeout", cfg.BodyTimeout, "how long a caller may take to send a request's body; a whole request is bounded by this plus --tool-timeout")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "close a kept-alive connection idle this long")
	fs.IntVar(&cfg.MaxHeaderBytes, "max-header-bytes", cfg.MaxHeaderBytes, "the largest request header block, in `bytes`")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "the most calls read or run at once; more are answered 503 with Retry-After")
	fs.BoolVar(&cfg.TraceSteps, "trace-steps", cfg.TraceSteps, "with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT), give each step of a call a span of its own rather than an attribute of the call's span")
	fs.StringVar(&cfg.CheckCache, "check-cache", cfg.CheckCache, "a `directory` of garmd's own where it records the catalogue's descriptor files it checked and the inputs whose validation rules it compiled, so that its next start builds those files without checking them again and compiles those inputs on first use (made 0700 when absent)")
	fs.StringVar(&cfg.GOGC, "gogc", cfg.GOGC, "the garbage collector's `target`: auto (chosen from GOMEMLIMIT or the container's memory limit), off, or a percentage; a GOGC environment variable always wins")
	busFlags(fs, cfg)
	fs.BoolVar(&cfg.LoopbackHostsOnly, "loopback-hosts-only", cfg.LoopbackHostsOnly, "answer on the tool plane and admin listener only requests addressed to a loopback host, and refuse a browser's cross-origin change (the dev plane's guard, for a garmd it runs as a process)")
	fs.BoolVar(&cfg.MCP, "mcp", cfg.MCP, "serve the Model Context Protocol at POST /mcp on the tool plane, with /.well-known/oauth-protected-resource")
	fs.StringVar(&cfg.MCPResource, "mcp-resource", cfg.MCPResource, "the MCP endpoint's canonical `url`: named by the metadata, accepted as a token's aud (default: http://<--listen>/mcp)")
	return fs
}

func serve(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, _, problems, err := loadConfig("garmd serve", args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if len(problems) > 0 {
		// The file's problems and Validate's together, as Serve would
		// report Validate's alone.
		fmt.Fprintln(stderr, allProblems(cfg, problems))
		return exitFailed
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(stderr, nil))
	if err := garmd.Serve(ctx, cfg); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	return exitOK
}

func check(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("garmd check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	catalogue := fs.String("catalogue", "", "the catalogue artifact to check: a file path or s3://bucket/key (`location`, required)")
	maxTools := fs.Int("max-tools", 0, "refuse a catalogue with more tools (0 = no limit)")
	withGrants := fs.Bool("with-grants", false, "check as if approval grants (step 5) were on")
	withNotify := fs.Bool("with-notify", false, "check as if --notify were on")
	withLimits := fs.Bool("with-limits", false, "check as if --limits were on")
	var auditRetention *time.Duration
	fs.Var(optionalDuration{&auditRetention}, "audit-retention", "check as if the audit sink were on, keeping rows this `long` (0 = indefinitely)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *catalogue == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "garmd check: --catalogue <file|s3://bucket/key> is required, and nothing else")
		return exitUsage
	}
	cc := garmd.CheckConfig{Catalogue: *catalogue, MaxTools: *maxTools, Grants: *withGrants, Notify: *withNotify, Limits: *withLimits, AuditRetention: auditRetention}
	if err := garmd.Check(stdout, cc); err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	return exitOK
}

// busFlags binds how garmd reaches the bus and serves its listeners:
// every secret is named by a file.
func busFlags(fs *flag.FlagSet, cfg *garmd.Config) {
	fs.StringVar(&cfg.NATSCreds, "nats-creds", cfg.NATSCreds, "`file` with a user JWT and nkey seed for the bus (decentralized auth)")
	fs.StringVar(&cfg.NATSNKey, "nats-nkey", cfg.NATSNKey, "`file` with an nkey seed for the bus")
	fs.StringVar(&cfg.NATSUserFile, "nats-user-file", cfg.NATSUserFile, "`file` with the bus user on its first line and the password on its second")
	fs.StringVar(&cfg.NATSTLSCA, "nats-tls-ca", cfg.NATSTLSCA, "`file` of CA certificates that verify the bus (turns TLS on)")
	fs.StringVar(&cfg.NATSTLSCert, "nats-tls-cert", cfg.NATSTLSCert, "client certificate `file` for mutual TLS with the bus (with --nats-tls-key)")
	fs.StringVar(&cfg.NATSTLSKey, "nats-tls-key", cfg.NATSTLSKey, "the client certificate's key `file`")
	fs.StringVar(&cfg.TLSCert, "tls-cert", cfg.TLSCert, "certificate `file` serving the tool plane and admin listener over TLS, with HTTP/2 (with --tls-key)")
	fs.StringVar(&cfg.TLSKey, "tls-key", cfg.TLSKey, "the listeners' certificate key `file`")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", cfg.TLSClientCA, "`file` of CA certificates a client's certificate must chain to (mutual TLS)")
}
