package approvals

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
)

// Defaults of [Config].
const (
	// DefaultSessionTTL bounds a session when the ID token lives longer.
	DefaultSessionTTL = 8 * time.Hour
	// DefaultMaxSessions bounds the sessions held at once.
	DefaultMaxSessions = 10000
	// DefaultMaxSessionsPerApprover bounds the sessions one approver holds at once.
	DefaultMaxSessionsPerApprover = 8
	// DefaultInboxLimit is how many requests a page of the inbox lists.
	DefaultInboxLimit = 50
	// DefaultOIDCClientID is the client id the service signs approvers in as.
	DefaultOIDCClientID = "garm-approvals"
)

// Config is everything the approvals service needs but its ports (the requests and the audit
// stream, given to [New]). cmd/garm-approvals only turns flags into it.
type Config struct {
	// BaseURL is where approvers reach the service, http(s)://host[:port][/path] with no trailing
	// slash (--base-url). Request pages are BaseURL + "/requests/" + id, the OIDC redirect URI is
	// BaseURL + [CallbackPath]; garmd's --approvals-url is this value. Cookies are Secure when it
	// is https.
	BaseURL string
	// KeyFile is the grant signing key (--key): a PEM PKCS#8 private key, P-256 (ES256) or
	// Ed25519 (EdDSA). Its public half is served at [JWKSPath].
	KeyFile string
	// GrantIssuer is the iss of every grant (--grant-issuer), what garmd's --grant-issuer must
	// be. Default: BaseURL.
	GrantIssuer string
	// GrantAudience is the aud of every grant (--grant-audience), what garmd's grant audience
	// must be. Required.
	GrantAudience string
	// GrantTTL caps a grant's life (--grant-ttl); a grant never lives longer than its tool's
	// max_grant_age_seconds. Zero: the tool's.
	GrantTTL time.Duration
	// OIDCIssuer is the approvers' identity provider (--oidc-issuer): the iss its ID tokens carry.
	OIDCIssuer string
	// OIDCDiscoveryURL is where its discovery document is fetched when that is not OIDCIssuer
	// (--oidc-discovery-url): only for an identity provider whose issuer is not where it serves,
	// as the dev identity provider's. Empty: OIDCIssuer.
	OIDCDiscoveryURL string
	// SubjectClaim is the ID-token claim whose value is the approver's garm subject
	// (--subject-claim): the same string garmd's tokens carry as sub for the same person, in
	// the same namespace. Four eyes compares it with the requester's subject and every actor,
	// and a grant names it as its approver, so an identity provider whose ID tokens name people
	// otherwise than garmd's tokens do must be given the claim that matches ("sub" when they
	// agree). Required: a sign-in whose ID token lacks it, or holds anything but a non-empty
	// string there, is refused.
	SubjectClaim string
	// OIDCClientID is the service's client id at the identity provider (--oidc-client-id).
	OIDCClientID string
	// OIDCClientSecret is its secret when the client is confidential; empty for a public client,
	// which authenticates by PKCE alone. cmd/garm-approvals reads it from a file.
	OIDCClientSecret string
	// SessionTTL bounds a session (--session-ttl); it never outlives the ID token it began with.
	SessionTTL time.Duration
	// MaxSessions bounds the sessions held (--max-sessions); when they are all live, a new
	// sign-in is refused rather than another approver signed out.
	MaxSessions int
	// MaxSessionsPerApprover bounds the sessions one approver holds (--max-sessions-per-approver);
	// beyond it their own session ending soonest ends.
	MaxSessionsPerApprover int
	// InboxLimit is how many requests a page of the inbox lists, oldest first; a page also
	// stops after reading pending.MaxInboxReads requests and links to the next.
	InboxLimit int
	// SealKey is the AES-256 key ([SealKeySize] bytes) sign-ins under way are sealed under in
	// the browser's login cookie. Empty: one made at random when the service starts, so a
	// sign-in begun before a restart, or on another replica, must begin again.
	SealKey []byte
	// HTTPClient fetches the identity provider's discovery, keys and tokens. Default: a client
	// with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives the service's log lines. Default: discarded.
	Logger *slog.Logger
}

// Validate reports every problem at once.
func (c Config) Validate() error {
	var problems []error
	report := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if err := absoluteURL(c.BaseURL); err != nil {
		report("--base-url: %v", err)
	} else if strings.HasSuffix(c.BaseURL, "/") {
		report("--base-url %q: no trailing slash", c.BaseURL)
	}
	if c.KeyFile == "" {
		report("--key: no grant signing key file named")
	}
	if c.GrantIssuer != "" {
		if err := absoluteURL(c.GrantIssuer); err != nil {
			report("--grant-issuer: %v", err)
		}
	}
	if c.GrantAudience == "" {
		report("--grant-audience: missing (garmd's grant audience)")
	}
	if c.GrantTTL < 0 || (c.GrantTTL > 0 && c.GrantTTL < time.Second) {
		report("--grant-ttl %v: zero (the tool's max grant age) or at least a second", c.GrantTTL)
	}
	if err := absoluteURL(c.OIDCIssuer); err != nil {
		report("--oidc-issuer: %v", err)
	}
	if c.OIDCDiscoveryURL != "" {
		if err := absoluteURL(c.OIDCDiscoveryURL); err != nil {
			report("--oidc-discovery-url: %v", err)
		}
	}
	if c.OIDCClientID == "" {
		report("--oidc-client-id: missing")
	}
	if c.SubjectClaim == "" {
		report("--subject-claim: missing (the ID-token claim naming the approver's garm subject, as garmd's tokens spell it in sub)")
	}
	if len(c.SealKey) != 0 && len(c.SealKey) != SealKeySize {
		report("seal key: %d bytes, want %d", len(c.SealKey), SealKeySize)
	}
	if c.MaxSessionsPerApprover < 0 {
		report("--max-sessions-per-approver %d: not negative", c.MaxSessionsPerApprover)
	}
	if c.SessionTTL < 0 || (c.SessionTTL > 0 && c.SessionTTL < time.Minute) {
		report("--session-ttl %v: zero (the default) or at least a minute", c.SessionTTL)
	}
	if c.MaxSessions < 0 {
		report("--max-sessions %d: not negative", c.MaxSessions)
	}
	if c.InboxLimit < 0 || c.InboxLimit > pending.MaxInboxReads {
		report("inbox limit %d: between 0 (the default) and %d", c.InboxLimit, pending.MaxInboxReads)
	}
	return errors.Join(problems...)
}

func absoluteURL(s string) error {
	if s == "" {
		return errors.New("missing")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an absolute http(s) URL without query or fragment", s)
	}
	return nil
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.GrantIssuer == "" {
		c.GrantIssuer = c.BaseURL
	}
	if c.OIDCDiscoveryURL == "" {
		c.OIDCDiscoveryURL = c.OIDCIssuer
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.MaxSessionsPerApprover == 0 {
		c.MaxSessionsPerApprover = DefaultMaxSessionsPerApprover
	}
	if c.InboxLimit == 0 {
		c.InboxLimit = DefaultInboxLimit
	}
	if len(c.SealKey) == 0 {
		c.SealKey = make([]byte, SealKeySize)
		rand.Read(c.SealKey) // never fails: crypto/rand crashes the program rather than return an error
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// secure reports whether the service is served over TLS, so its cookies are Secure.
func (c Config) secure() bool { return strings.HasPrefix(c.BaseURL, "https://") }
