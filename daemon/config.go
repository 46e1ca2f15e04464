package garmd

import (
	"bytes"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
	"github.com/garm-dev/garm/daemon/internal/gctarget"
)

// Config is garmd's configuration: one field per `garmd serve` flag (design
// 7.1), plus the logger. DefaultConfig holds the flags' defaults.
type Config struct {
	// Catalogue is the catalogue artifact (--catalogue): a file path, or
	// s3://bucket/key read through the AWS SDK's default chain.
	Catalogue string
	// CataloguePoll is how often an s3:// catalogue's ETag is polled for a
	// new artifact (--catalogue-poll); 0 reads it once at start. Ignored
	// for a file.
	CataloguePoll time.Duration
	// The catalogue's signatures (issue 36; config_signed.go): none of
	// them is checked unless CatalogueKeys is set.
	CatalogueSigning
	// NATS is the bus's URL (--nats), or a seed list: a cluster's server
	// URLs separated by commas, of which any one answering is enough to
	// start. It carries no credentials: those come from the files below.
	NATS string
	// Listen is the tool plane's address (--listen).
	Listen string
	// AdminListen is the health, readiness and metrics address
	// (--admin-listen).
	AdminListen string
	// Issuers are the trusted token issuers (--issuer, repeatable), paired
	// by position with JWKS, their key-set URLs (--jwks, repeatable).
	Issuers []string
	JWKS    []string
	// Audience is what a token's aud must contain (--audience).
	Audience string
	// HashKeyFile holds the HMAC key for hash redactions (--hash-key-file):
	// at least MinHashKey bytes after trimming surrounding white space.
	HashKeyFile string
	// GrantIssuer turns on step 5, approval grants (--grant-issuer): the
	// one issuer whose grants garmd accepts. Empty leaves step 5 off, and a
	// catalogue with a MODE_GRANT tool then does not mount.
	GrantIssuer string
	// GrantJWKS is the grant issuer's key-set URL (--grant-jwks); empty
	// means the one --jwks, when exactly one is given.
	GrantJWKS string
	// GrantAudience is what a grant's aud must contain (--grant-audience);
	// empty means Audience.
	GrantAudience string
	// Approvals turns on approval requests (--approvals): a call to a
	// MODE_GRANT tool without a grant is recorded for a human in the
	// GARM_APPROVALS bucket, and Garm-Approval collects the decided grant.
	// Needs GrantIssuer, whose grants the approvals service mints.
	Approvals bool
	// ApprovalsURL is the approvals inbox's public base URL
	// (--approvals-url); a request's page is <url>/requests/<id>.
	ApprovalsURL string
	// ApprovalStateKeyFile holds the HMAC key of MCP requestState
	// (--approval-state-key-file): at least MinApprovalStateKey bytes, the
	// same on every replica. Required with Approvals and MCP.
	ApprovalStateKeyFile string
	// AuditStreamRetention turns on the audit sink (GARM_AUDIT) when set
	// (--audit-stream-retention): its value is the retention the operator
	// asserts the stream keeps, 0 meaning indefinitely. nil: no audit sink.
	AuditStreamRetention *time.Duration
	// Notify turns on step 10, publishing MODE_NOTIFY tools' rows to
	// GARM_NOTIFY (--notify).
	Notify bool
	// Limits turns on the limit step, counting calls on the GARM_LIMITS_*
	// counter streams (--limits); without it a catalogue that declares
	// limits does not mount. LimitReplicas is how many replicas serve,
	// each taking its share of a soft limit while the bus is away
	// (--limit-replicas; 0 is 1).
	Limits        bool
	LimitReplicas int
	// LimitBound is how long counting a call may take before a hard
	// limit refuses it limit_unavailable (--limit-bound; 0 is
	// limit.DefaultBound).
	LimitBound time.Duration
	// LedgerStream publishes the ledger to GARM_LEDGER, falling back to the
	// log (--ledger-stream).
	LedgerStream bool
	// ToolTimeout is the deadline of a call whose caller set none, and the
	// ceiling on one it set (--tool-timeout).
	ToolTimeout time.Duration
	// MaxTools refuses a catalogue with more tools; 0 is no limit
	// (--max-tools).
	MaxTools int
	// MCP serves the Model Context Protocol at POST /mcp on the tool plane,
	// with its protected resource metadata (--mcp).
	MCP bool
	// MCPResource is the MCP endpoint's canonical URL (--mcp-resource): the
	// resource the metadata names, and an audience a token may carry in
	// place of Audience. Empty: http://<the bound --listen address>/mcp.
	MCPResource string
	// MinReplicas is the fewest replicas every stream and bucket garmd
	// uses must have (--min-replicas): 3 on a three-node cluster.
	MinReplicas int

	// The tool plane's bounds on slow and abusive callers (decision 0031).
	// HeaderTimeout bounds reading a request's headers (--header-timeout).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body (--body-timeout). A whole
	// request — headers read, body read, the call, the answer written — is
	// bounded by BodyTimeout + ToolTimeout + a grace for the answer.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends nothing for
	// this long (--idle-timeout).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's header block (--max-header-bytes).
	MaxHeaderBytes int
	// MaxInFlight bounds the calls being read or run at once; over it a
	// call is answered 503 with Retry-After, and recorded
	// (--max-in-flight).
	MaxInFlight int

	// GOGC is the garbage collector's target (--gogc): "auto" lets garmd
	// choose from the memory limit it can see, "off" or a percentage sets
	// it; a GOGC environment variable always wins (docs/decisions/0066).
	// Empty leaves the process's runtime as it is, for a program that
	// embeds garmd and tunes its own.
	GOGC string

	// How garmd reaches the bus and who may reach garmd (decision 0040).
	// Every secret is a file, never a flag's value; at most one of
	// NATSCreds, NATSNKey and NATSUserFile.
	//
	// NATSCreds is a credentials file, a user JWT and its nkey seed, for
	// decentralized auth (--nats-creds).
	NATSCreds string
	// NATSNKey is a file holding an nkey seed (--nats-nkey).
	NATSNKey string
	// NATSUserFile holds the user on its first line and the password on
	// its second (--nats-user-file).
	NATSUserFile string
	// NATSTLSCA verifies the bus's certificate (--nats-tls-ca); NATSTLSCert
	// and NATSTLSKey are garmd's client certificate for mutual TLS
	// (--nats-tls-cert, --nats-tls-key).
	NATSTLSCA, NATSTLSCert, NATSTLSKey string
	// TLSCert and TLSKey serve the tool plane and the admin listener over
	// TLS, with HTTP/2 (--tls-cert, --tls-key); TLSClientCA then requires
	// clients to present a certificate it verifies (--tls-client-ca).
	TLSCert, TLSKey, TLSClientCA string

	// Logger receives the startup report, warnings and, without
	// LedgerStream, the ledger. nil logs text to standard error.
	Logger *slog.Logger
	// TracerProvider records each call's spans. nil means the provider the
	// standard OTEL_* variables describe, which is none (tracing off) when
	// they name no endpoint; garmd then flushes and shuts it down after the
	// ledger. A provider given here belongs to the caller, who shuts it
	// down; garmd only flushes it, after the ledger.
	TracerProvider trace.TracerProvider
	// TraceSteps gives each step of a call that takes time a child span of
	// its own (--trace-steps), the span tree of docs/decisions/0060. Off, a
	// traced call has garmd's server span and its NATS client span, with
	// each step's time an attribute of the server span: a third of the
	// spans to record and export (docs/decisions/0143).
	TraceSteps bool
	// CheckCache is a directory where garmd records, after each catalogue
	// it mounts, the keys of the descriptor files it built with every
	// check and of the files whose inputs' validation rules it compiled, so
	// that its next start builds those files from their bytes without
	// checking them again and compiles those inputs on first use
	// (--check-cache; daemon/internal/checkcache, docs/decisions/0146,
	// 0148). "" keeps no record: every start checks every file and compiles
	// every input at mount.
	CheckCache string
	// Guard, when set, wraps the handlers of the tool plane and the admin
	// listener. The dev plane serves an in-process garmd behind its
	// loopback Host allowlist with it (internal/loopback, decision 0087).
	// Not a flag: a deployment guards its listeners with what stands before
	// them.
	Guard func(http.Handler) http.Handler
	// LoopbackHostsOnly serves the tool plane and the admin listener behind
	// internal/loopback's guard when Guard is nil: a request whose Host is
	// not loopback, or a browser's cross-origin change, is refused 403. For
	// a garmd the dev plane runs as a process of its own (a cluster's
	// replicas), where a Go-only Guard cannot reach (decision 0087).
	LoopbackHostsOnly bool
}

// MinHashKey is the shortest hash key garmd accepts, in bytes.
const MinHashKey = 16

// MinApprovalStateKey is the shortest requestState key garmd accepts, in
// bytes: a full HMAC-SHA256 block of strength.
const MinApprovalStateKey = 32

// DefaultConfig is the configuration of `garmd serve` with no flags.
func DefaultConfig() Config {
	return Config{
		CataloguePoll: 30 * time.Second,
		NATS:          "nats://127.0.0.1:4222",
		Listen:        "127.0.0.1:7440",
		AdminListen:   "127.0.0.1:7441",
		Audience:      "garm",
		ToolTimeout:   30 * time.Second,
		MinReplicas:   1,

		HeaderTimeout:  10 * time.Second,
		BodyTimeout:    30 * time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		MaxInFlight:    1024,
		GOGC:           gctarget.Auto,
	}
}

// Validate reports every problem of the configuration at once, one per
// line, or nil.
func (c Config) Validate() error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	switch {
	case c.Catalogue == "":
		add("--catalogue is required: the catalogue artifact to serve")
	case source.IsS3(c.Catalogue):
		// The URL is not echoed: one with user information may carry a secret.
		if _, _, err := source.ParseS3URL(c.Catalogue); err != nil {
			add("--catalogue: %v", err)
		}
	default:
		if info, err := os.Stat(c.Catalogue); err != nil {
			add("--catalogue: %v", err)
		} else if !info.Mode().IsRegular() {
			add("--catalogue %s is not a file", c.Catalogue)
		}
	}
	if c.CataloguePoll < 0 {
		add("--catalogue-poll %s is negative (0 reads an s3:// catalogue once, at start)", c.CataloguePoll)
	}
	problems = append(problems, c.signingProblems()...)
	problems = append(problems, c.busProblems()...)
	problems = append(problems, c.listenerTLSProblems()...)
	if err := checkAddr(c.Listen); err != nil {
		add("--listen %q: %v", c.Listen, err)
	}
	if err := checkAddr(c.AdminListen); err != nil {
		add("--admin-listen %q: %v", c.AdminListen, err)
	}
	if c.Listen != "" && c.Listen == c.AdminListen && !strings.HasSuffix(c.Listen, ":0") {
		add("--listen and --admin-listen are both %s; the admin listener is kept apart from the tool plane", c.Listen)
	}
	problems = append(problems, issuerProblems(c.Issuers, c.JWKS)...)
	if strings.TrimSpace(c.Audience) == "" {
		add("--audience is empty: tokens must name an audience garmd checks")
	}
	if c.HashKeyFile == "" {
		add("--hash-key-file is required: a file holding at least %d bytes of key for hash redactions", MinHashKey)
	} else if _, err := ReadHashKey(c.HashKeyFile); err != nil {
		add("--hash-key-file: %v", err)
	}
	problems = append(problems, c.grantProblems()...)
	problems = append(problems, c.approvalProblems()...)
	if c.LimitReplicas < 0 {
		add("--limit-replicas %d is negative", c.LimitReplicas)
	}
	if c.LimitBound < 0 {
		add("--limit-bound %s is negative", c.LimitBound)
	} else if c.LimitBound > 0 && c.LimitBound >= c.ToolTimeout {
		add("--limit-bound %s is not shorter than --tool-timeout %s: counting a call must take much less than the call", c.LimitBound, c.ToolTimeout)
	}
	if r := c.AuditStreamRetention; r != nil && *r < 0 {
		add("--audit-stream-retention %s is negative (0 means the stream keeps rows indefinitely)", *r)
	}
	if c.ToolTimeout <= 0 {
		add("--tool-timeout %s is not positive", c.ToolTimeout)
	}
	if c.MCPResource != "" {
		if !c.MCP {
			add("--mcp-resource is given without --mcp: the MCP endpoint is turned on by --mcp")
		} else if err := checkResourceURL(c.MCPResource); err != nil {
			add("--mcp-resource %q: %v", c.MCPResource, err)
		}
	}
	if c.MaxTools < 0 {
		add("--max-tools %d is negative (0 means no limit)", c.MaxTools)
	}
	problems = append(problems, c.planeProblems()...)
	problems = append(problems, c.replicationProblems()...)
	if len(problems) == 0 {
		return nil
	}
	return &ConfigError{Problems: problems}
}

// Bounds of the plane's bounds: a header block must hold a token and a
// grant (16 KiB each, design 7.5, 7.9) with room to spare.
const (
	minHeaderBytes = 40 << 10
	maxHeaderBytes = 1 << 20
)

func (c Config) planeProblems() []string {
	var problems []string
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--header-timeout", c.HeaderTimeout}, {"--body-timeout", c.BodyTimeout}, {"--idle-timeout", c.IdleTimeout}} {
		if d.v <= 0 {
			problems = append(problems, fmt.Sprintf("%s %s is not positive: an unbounded wait lets a slow client hold the plane", d.flag, d.v))
		}
	}
	if c.MaxHeaderBytes < minHeaderBytes || c.MaxHeaderBytes > maxHeaderBytes {
		problems = append(problems, fmt.Sprintf("--max-header-bytes %d is outside [%d, %d]: headers carry a token and a grant of up to 16 KiB each", c.MaxHeaderBytes, minHeaderBytes, maxHeaderBytes))
	}
	if c.GOGC != "" {
		if err := gctarget.Validate(c.GOGC); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if c.MaxInFlight <= 0 {
		problems = append(problems, fmt.Sprintf("--max-in-flight %d is not positive", c.MaxInFlight))
	}
	return problems
}

// Grants reports whether step 5 is on.
func (c Config) Grants() bool { return c.GrantIssuer != "" }

// GrantKeySet is the grant issuer's key-set URL with its default applied:
// --grant-jwks, else the one --jwks when exactly one is given.
func (c Config) GrantKeySet() string {
	if c.GrantJWKS == "" && len(c.JWKS) == 1 {
		return c.JWKS[0]
	}
	return c.GrantJWKS
}

// GrantAud is what a grant's aud must contain, with its default applied.
func (c Config) GrantAud() string {
	if c.GrantAudience == "" {
		return c.Audience
	}
	return c.GrantAudience
}

func (c Config) grantProblems() []string {
	if !c.Grants() {
		var problems []string
		if c.GrantJWKS != "" {
			problems = append(problems, "--grant-jwks is given without --grant-issuer: approval grants are turned on by naming their issuer")
		}
		if c.GrantAudience != "" {
			problems = append(problems, "--grant-audience is given without --grant-issuer: approval grants are turned on by naming their issuer")
		}
		return problems
	}
	jwks := c.GrantKeySet()
	if jwks == "" {
		return []string{fmt.Sprintf("--grant-issuer %q needs --grant-jwks: it defaults to --jwks only when exactly one is given, and %d are", c.GrantIssuer, len(c.JWKS))}
	}
	if err := checkJWKSURL(jwks); err != nil {
		return []string{fmt.Sprintf("--grant-jwks %q: %v", jwks, err)}
	}
	return nil
}

func (c Config) approvalProblems() []string {
	var problems []string
	if !c.Approvals {
		if c.ApprovalsURL != "" {
			problems = append(problems, "--approvals-url is given without --approvals: approval requests are turned on by --approvals")
		}
		if c.ApprovalStateKeyFile != "" {
			problems = append(problems, "--approval-state-key-file is given without --approvals: approval requests are turned on by --approvals")
		}
		return problems
	}
	if !c.Grants() {
		problems = append(problems, "--approvals needs --grant-issuer: a decided request carries a grant that step 5 verifies and spends")
	}
	if c.ApprovalsURL == "" {
		problems = append(problems, "--approvals needs --approvals-url: the inbox's public base URL, where a caller is sent")
	} else if err := approval.CheckBaseURL(c.ApprovalsURL); err != nil {
		problems = append(problems, "--approvals-url: "+err.Error())
	}
	switch {
	case c.ApprovalStateKeyFile == "" && c.MCP:
		problems = append(problems, fmt.Sprintf("--approvals with --mcp needs --approval-state-key-file: a file holding at least %d bytes of key that protects MCP requestState", MinApprovalStateKey))
	case c.ApprovalStateKeyFile != "":
		if _, err := ReadApprovalStateKey(c.ApprovalStateKeyFile); err != nil {
			problems = append(problems, "--approval-state-key-file: "+err.Error())
		}
	}
	return problems
}

// ReadApprovalStateKey reads the requestState key from path, as
// ReadHashKey reads its key, refused when shorter than MinApprovalStateKey
// bytes.
func ReadApprovalStateKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key := bytes.TrimSpace(data)
	if len(key) < MinApprovalStateKey {
		return nil, fmt.Errorf("%s holds %d bytes of key after trimming; at least %d are required", path, len(key), MinApprovalStateKey)
	}
	return key, nil
}

// ConfigError lists every problem Validate found.
type ConfigError struct{ Problems []string }

func (e *ConfigError) Error() string {
	return "garmd cannot start:\n  " + strings.Join(e.Problems, "\n  ")
}

func issuerProblems(issuers, jwks []string) []string {
	var problems []string
	if len(issuers) == 0 {
		problems = append(problems, "--issuer is required (repeatable): garmd has no anonymous mode")
	}
	if len(issuers) != len(jwks) {
		problems = append(problems, fmt.Sprintf("%d --issuer and %d --jwks: each issuer is paired by position with its key-set URL", len(issuers), len(jwks)))
	}
	seen := map[string]bool{}
	for i, iss := range issuers {
		if iss == "" {
			problems = append(problems, fmt.Sprintf("--issuer #%d is empty", i+1))
		} else if seen[iss] {
			problems = append(problems, fmt.Sprintf("--issuer %q is given twice", iss))
		}
		seen[iss] = true
	}
	for _, j := range jwks {
		if err := checkJWKSURL(j); err != nil {
			problems = append(problems, fmt.Sprintf("--jwks %q: %v", j, err))
		}
	}
	return problems
}

// checkJWKSURL accepts https, and http only to a loopback host: keys
// fetched in the clear from elsewhere could be anyone's.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("key sets are fetched over https (plain http only from a loopback host)")
	}
	return errors.New("not an https URL")
}

// checkResourceURL accepts an absolute https URL without query or
// fragment, and http only for a loopback host (RFC 8707's resource
// identifier; MCP requires https beyond a developer's machine).
func checkResourceURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return errors.New("not an absolute URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return errors.New("a resource URL has no query or fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("a resource beyond loopback is named by an https URL")
	}
	return errors.New("not an https URL")
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func checkAddr(addr string) error {
	if addr == "" {
		return errors.New("empty address")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return errors.New("not host:port")
	}
	return nil
}

// ReadHashKey reads the hash key from path: its contents with surrounding
// white space trimmed, refused when shorter than MinHashKey bytes.
func ReadHashKey(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key := bytes.TrimSpace(data)
	if len(key) < MinHashKey {
		return nil, fmt.Errorf("%s holds %d bytes of key after trimming; at least %d are required", path, len(key), MinHashKey)
	}
	return key, nil
}
