package authn

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/jwtclaims"
	"github.com/garm-dev/garm/daemon/internal/keyset"
)

// Limits and defaults of step 1 (design 7.5).
const (
	// MaxTokenBytes is the largest bearer token read; a larger one is
	// refused before it is parsed.
	MaxTokenBytes = 16 << 10
	// DefaultSkew is the clock skew allowed on exp, nbf and iat.
	DefaultSkew = 60 * time.Second
	// DefaultCacheSize is the default bound on cached principals.
	DefaultCacheSize = 10_000
)

// Issuer pairs an exact iss string with the JWKS URL of its keys.
type Issuer struct {
	Name    string
	JWKSURL string
}

// Config is what an Authenticator needs. Issuers and Audience are
// required; every other field has a default.
type Config struct {
	Issuers []Issuer
	// Audience is the aud a token must name.
	Audience string
	// Audiences are further values of aud that are accepted in its place:
	// a token is accepted when its aud names Audience or any of these
	// (the MCP resource's canonical URL, RFC 8707). Optional.
	Audiences []string
	// Skew is allowed both ways on exp and nbf; zero means DefaultSkew.
	Skew time.Duration
	// CacheSize bounds the verified-token cache; zero means
	// DefaultCacheSize, negative turns the cache off.
	CacheSize int
	// Client fetches the key sets; default http.DefaultClient.
	Client *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Logger receives dropped compartments, unknown kinds and key set
	// failures; default discards.
	Logger *slog.Logger
}

// Authenticator is chain step 1: a bearer token in, a principal out. It is
// safe for concurrent use.
type Authenticator struct {
	issuers map[string]*keyset.Set
	// audiences are the aud values accepted: Config.Audience first.
	audiences []string
	skew      time.Duration
	now       func() time.Time
	log       *slog.Logger
	// cache is nil when turned off.
	cache *cache
}

// New is an Authenticator for cfg, or a *deny.Misconfigured naming every
// problem with it.
func New(cfg Config) (*Authenticator, error) {
	var problems []string
	if len(cfg.Issuers) == 0 {
		problems = append(problems, "authn: no issuer is configured")
	}
	seen := map[string]bool{}
	for i, iss := range cfg.Issuers {
		if iss.Name == "" {
			problems = append(problems, fmt.Sprintf("authn: issuer %d has no name", i))
		} else if seen[iss.Name] {
			problems = append(problems, fmt.Sprintf("authn: issuer %q is configured twice", iss.Name))
		}
		seen[iss.Name] = true
		if u, err := url.Parse(iss.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			problems = append(problems, fmt.Sprintf("authn: issuer %q: JWKS URL %q is not an http(s) URL", iss.Name, iss.JWKSURL))
		}
	}
	if cfg.Audience == "" {
		problems = append(problems, "authn: no audience is configured")
	}
	for i, aud := range cfg.Audiences {
		if aud == "" {
			problems = append(problems, fmt.Sprintf("authn: further audience %d is empty", i))
		}
	}
	if cfg.Skew < 0 {
		problems = append(problems, fmt.Sprintf("authn: skew %s is negative", cfg.Skew))
	}
	if len(problems) > 0 {
		return nil, &deny.Misconfigured{Problems: problems}
	}

	a := &Authenticator{
		issuers:   make(map[string]*keyset.Set, len(cfg.Issuers)),
		audiences: append([]string{cfg.Audience}, cfg.Audiences...),
		skew:      cfg.Skew,
		now:       cfg.Now,
		log:       cfg.Logger,
	}
	if a.skew == 0 {
		a.skew = DefaultSkew
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.CacheSize == 0:
		a.cache = newCache(DefaultCacheSize)
	case cfg.CacheSize > 0:
		a.cache = newCache(cfg.CacheSize)
	}
	opts := keyset.Options{Client: cfg.Client, Now: a.now, Logger: a.log}
	for _, iss := range cfg.Issuers {
		a.issuers[iss.Name] = keyset.NewSet(iss.JWKSURL, opts)
	}
	return a, nil
}

// Authenticate is the principal the Authorization header value proves, its
// compartments numbered by tax; or a *deny.Denied with code
// Unauthenticated saying why not, for the ledger.
//
// The principal may be shared with every other call presenting the same
// token to the same generation: callers must treat it, its slices and its
// map as read-only.
func (a *Authenticator) Authenticate(ctx context.Context, authorization string, tax Taxonomy) (*call.Principal, error) {
	p, _, err := a.AuthenticateCached(ctx, authorization, tax)
	return p, err
}

// AuthenticateCached is Authenticate, also saying whether the token was
// found in the verified-token cache (for the authentication span).
func (a *Authenticator) AuthenticateCached(ctx context.Context, authorization string, tax Taxonomy) (p *call.Principal, cacheHit bool, err error) {
	token, err := bearer(authorization)
	if err != nil {
		return nil, false, err
	}
	if tax == nil {
		return nil, false, deny.Fail(deny.Internal, "internal", "authn: no taxonomy to number compartments with")
	}
	if a.cache == nil || reflect.TypeOf(tax).Kind() != reflect.Pointer {
		p, err = a.verify(ctx, token, tax)
		return p, false, err
	}
	key := cacheKey{sum: tokenSum(token), tax: tax}
	if p := a.cache.get(&key, a.now()); p != nil {
		return p, true, nil
	}
	if p, err = a.verify(ctx, token, tax); err != nil {
		return nil, false, err
	}
	a.cache.put(&key, p, a.now())
	return p, false, nil
}

// KeySetStats are the stats of each trusted issuer's key set, by issuer,
// for metrics.
func (a *Authenticator) KeySetStats() map[string]keyset.Stats {
	out := make(map[string]keyset.Stats, len(a.issuers))
	for iss, set := range a.issuers {
		out[iss] = set.Stats()
	}
	return out
}

// CacheCounts is the verified-token cache's hits and misses so far.
func (a *Authenticator) CacheCounts() (hits, misses uint64) {
	if a.cache == nil {
		return 0, 0
	}
	return a.cache.hits.Load(), a.cache.misses.Load()
}

func refuse(format string, args ...any) error {
	return deny.Deny(deny.Unauthenticated, fmt.Sprintf(format, args...))
}

// bearer is the token of a "Bearer" Authorization value (scheme in any
// case), refused when absent or larger than MaxTokenBytes.
func bearer(authorization string) (string, error) {
	if authorization == "" {
		return "", refuse("no Authorization header")
	}
	// Bounded before anything scans it: the scheme and its spaces are
	// allowed a little room beyond the token's limit.
	if len(authorization) > MaxTokenBytes+64 {
		return "", refuse("the bearer token is larger than %d bytes", MaxTokenBytes)
	}
	scheme, rest, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", refuse("the Authorization scheme is not Bearer")
	}
	token := strings.TrimLeft(rest, " ")
	if token == "" {
		return "", refuse("the bearer token is empty")
	}
	if len(token) > MaxTokenBytes {
		return "", refuse("the bearer token is larger than %d bytes", MaxTokenBytes)
	}
	return token, nil
}

// verify checks a token from scratch and folds its chain.
func (a *Authenticator) verify(ctx context.Context, token string, tax Taxonomy) (*call.Principal, error) {
	compact := []byte(token)
	if _, err := keyset.ParseHeader(compact); err != nil {
		return nil, refuse("malformed token: %v", err)
	}
	// The unverified iss only chooses which single key set to try.
	iss, err := unverifiedIssuer(compact)
	if err != nil {
		return nil, refuse("malformed token: %v", err)
	}
	set, ok := a.issuers[iss]
	if !ok {
		return nil, refuse("no key set is configured for issuer %q", clip(iss))
	}
	payload, _, err := set.Verify(ctx, compact)
	if err != nil {
		return nil, refuse("issuer %q: %v", clip(iss), err)
	}
	c, err := parseClaims(payload)
	if err != nil {
		return nil, refuse("issuer %q: %v", clip(iss), err)
	}
	if c.issuer != iss {
		return nil, refuse("the verified iss %q is not the issuer whose keys verified it (%q)", clip(c.issuer), clip(iss))
	}
	if !slices.ContainsFunc(c.audience, func(aud string) bool { return slices.Contains(a.audiences, aud) }) {
		return nil, refuse("issuer %q: the token's aud names none of this plane's audiences", clip(iss))
	}
	now := a.now()
	if !now.Before(c.expiry.Add(a.skew)) {
		return nil, refuse("issuer %q: the token expired at %s", clip(iss), c.expiry.Format(time.RFC3339))
	}
	if !c.notBefore.IsZero() && now.Before(c.notBefore.Add(-a.skew)) {
		return nil, refuse("issuer %q: the token is not valid before %s", clip(iss), c.notBefore.Format(time.RFC3339))
	}
	// A token issued in the future was minted by a clock that cannot be
	// trusted, or made to outlive its own lifetime.
	if c.issuedAt.After(now.Add(a.skew)) {
		return nil, refuse("issuer %q: the token was issued in the future (%s)", clip(iss), c.issuedAt.Format(time.RFC3339))
	}

	p, dropped, undeclared := fold(c, tax)
	p.View = tax.PrincipalView(p)
	if len(dropped) > 0 {
		a.log.Warn("authn: dropping compartments the serving catalogue does not declare",
			"issuer", iss, "subject", clip(p.Subject), "dropped", dropped)
	}
	if len(undeclared) > 0 {
		a.log.Warn("authn: ignoring attributes the serving catalogue does not declare",
			"issuer", iss, "subject", clip(p.Subject), "ignored", undeclared)
	}
	for i := range c.levels {
		if k := c.levels[i].unknownKind; k != "" {
			a.log.Warn("authn: unknown principal kind recorded as unspecified",
				"issuer", iss, "subject", clip(c.levels[i].subject), "kind", k)
		}
	}
	return p, nil
}

// unverifiedIssuer reads iss from a compact JWS's payload without trusting
// it: it is only the name of the key set to verify with.
func unverifiedIssuer(compact []byte) (string, error) {
	start := bytes.IndexByte(compact, '.') + 1
	end := start + bytes.IndexByte(compact[start:], '.')
	raw, err := base64.RawURLEncoding.Strict().DecodeString(string(compact[start:end]))
	if err != nil {
		return "", errors.New("the payload is not base64url")
	}
	o, err := jwtclaims.AsObject(raw)
	if err != nil {
		return "", errors.New("the payload is not a JSON object")
	}
	return requiredString(o, "", "iss")
}

// tokenSum is the SHA-256 of token, read in place: a token is hundreds of
// bytes, and converting it to a byte slice copied it on every call.
// sha256.Sum256 only reads its argument.
func tokenSum(token string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(token), len(token)))
}
