package idp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"
	"unicode"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

const (
	// DefaultIssuer is the iss of every token unless [Options.Issuer] says otherwise. The .invalid
	// top-level domain never resolves (RFC 2606), so nothing can fetch keys from it: garmd must be
	// given the JWKS URL of a running [Server] explicitly.
	DefaultIssuer = "https://idp.garm.invalid"
	// DefaultAudience is the aud of every token unless [Options.Audience] says otherwise.
	DefaultAudience = "garm"
	// DefaultTokenTTL is how long a token lives unless [Options.TokenTTL] says otherwise.
	DefaultTokenTTL = time.Hour
)

// Options configures an [IdP]. The zero value is usable: every field has a default.
type Options struct {
	// Issuer is the iss of every token: an absolute URL. Default [DefaultIssuer].
	Issuer string
	// Audience is the aud of every token, a single string. Default [DefaultAudience].
	Audience string
	// TokenTTL is the time from iat to exp, at least a second. Default [DefaultTokenTTL].
	TokenTTL time.Duration
	// GrantAudience is the aud of every approval grant, a single string. Default: the token
	// audience, [Options.Audience].
	GrantAudience string
	// GrantTTL is the time from a grant's iat to its exp, at least a second. Default
	// [DefaultGrantTTL].
	GrantTTL time.Duration
	// Now is the clock tokens and grants are stamped with. Default time.Now.
	Now func() time.Time
	// Logger receives the HTTP server's own errors. Default: discarded.
	Logger *slog.Logger
}

// Errors a token or grant request can fail with; [IdP.Handler] answers each with its own status.
var (
	// ErrUnknownUser: the user (or approver) handle names no persona (404).
	ErrUnknownUser = errors.New("unknown user")
	// ErrUnknownAgent: the as handle names no persona (404).
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrNotAUser: the user handle names an agent; an agent is issued only as the actor (400).
	// For a grant: the approver is an agent, or a user persona whose kind is not USER (400).
	ErrNotAUser = errors.New("not a user")
	// ErrNotAnAgent: the as handle names a user, who cannot be an actor (400).
	ErrNotAnAgent = errors.New("not an agent")
	// ErrMayNotActFor: the agent does not list the user in may_act_for (403).
	ErrMayNotActFor = errors.New("agent may not act for user")
	// ErrInvalidRequest: a parameter is malformed (400).
	ErrInvalidRequest = errors.New("invalid request")
)

// IdP issues ES256 tokens and approval grants for the personas of one file, signed with a key
// made when it was created and never stored.
type IdP struct {
	issuer   string
	audience string
	ttl      time.Duration
	now      func() time.Time
	log      *slog.Logger

	grantAudience string
	grantTTL      time.Duration

	key  jwk.Key // private, with kid and alg
	kid  string
	jwks []byte // the public key set, marshalled once

	personas     *Personas // canonical copy, served at /personas
	personasJSON []byte
	users        map[string]principal
	agents       map[string]principal

	oidc oidcState
}

// New validates the personas and the options and generates the signing key: ES256 (P-256)
// with a random kid.
func New(p *Personas, o Options) (*IdP, error) {
	if p == nil {
		return nil, errors.New("idp: no personas")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := o.withDefaults(); err != nil {
		return nil, err
	}
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("idp: generate key: %w", err)
	}
	kid := rand.Text()
	key, err := jwk.Import(raw)
	if err != nil {
		return nil, fmt.Errorf("idp: import key: %w", err)
	}
	if err := setAll(key, map[string]any{
		jwk.KeyIDKey: kid, jwk.AlgorithmKey: jwa.ES256(), jwk.KeyUsageKey: jwk.ForSignature,
	}); err != nil {
		return nil, fmt.Errorf("idp: key attributes: %w", err)
	}
	pub, err := key.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("idp: public key: %w", err)
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, fmt.Errorf("idp: key set: %w", err)
	}
	jwks, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("idp: marshal key set: %w", err)
	}
	personas := p.canonical()
	personasJSON, err := json.Marshal(personas)
	if err != nil {
		return nil, fmt.Errorf("idp: marshal personas: %w", err)
	}
	users, agents := foldPersonas(personas)
	return &IdP{
		issuer: o.Issuer, audience: o.Audience, ttl: o.TokenTTL, now: o.Now, log: o.Logger,
		grantAudience: o.GrantAudience, grantTTL: o.GrantTTL,
		key: key, kid: kid, jwks: jwks,
		personas: personas, personasJSON: personasJSON, users: users, agents: agents,
	}, nil
}

func (o *Options) withDefaults() error {
	if o.Issuer == "" {
		o.Issuer = DefaultIssuer
	}
	if u, err := url.Parse(o.Issuer); err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("idp: issuer %q is not an absolute URL", o.Issuer)
	}
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	switch {
	case o.TokenTTL == 0:
		o.TokenTTL = DefaultTokenTTL
	case o.TokenTTL < time.Second:
		return fmt.Errorf("idp: token TTL %v is shorter than a second", o.TokenTTL)
	}
	if o.GrantAudience == "" {
		o.GrantAudience = o.Audience
	}
	switch {
	case o.GrantTTL == 0:
		o.GrantTTL = DefaultGrantTTL
	case o.GrantTTL < time.Second:
		return fmt.Errorf("idp: grant TTL %v is shorter than a second", o.GrantTTL)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func setAll(key jwk.Key, attrs map[string]any) error {
	for name, v := range attrs {
		if err := key.Set(name, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Issuer is the iss every token carries; garmd pairs it with the JWKS URL.
func (i *IdP) Issuer() string { return i.issuer }

// Audience is the aud every token carries.
func (i *IdP) Audience() string { return i.audience }

// Personas is a copy of the persona file the IdP serves, spellings canonical.
func (i *IdP) Personas() *Personas { return i.personas.canonical() }

// Token issues a token for a user; with a non-empty as, the agent as acting for the user. It
// answers exactly what GET /token?user=…&as=… answers.
func (i *IdP) Token(user, as string) (string, error) {
	return i.issue(user, as, "")
}

// TokenWithExec is [IdP.Token] with an exec claim naming the runner subject that executes the
// call (GET /token?…&exec=…). exec must be non-empty.
func (i *IdP) TokenWithExec(user, as, exec string) (string, error) {
	if !isPrintable(exec) {
		return "", fmt.Errorf("%w: exec must be a non-empty printable subject", ErrInvalidRequest)
	}
	return i.issue(user, as, exec)
}

func (i *IdP) issue(user, as, exec string) (string, error) {
	subject, ok := i.users[user]
	if !ok {
		if _, isAgent := i.agents[user]; isAgent {
			return "", fmt.Errorf("%w: %q is an agent; ask for a user with as=%s", ErrNotAUser, user, user)
		}
		return "", fmt.Errorf("%w %q", ErrUnknownUser, user)
	}
	now := i.now().Truncate(time.Second)
	claims := tokenClaims{
		Issuer:    i.issuer,
		Subject:   subject.subject,
		Audience:  i.audience,
		IssuedAt:  now.Unix(),
		NotBefore: now.Unix(),
		Expiry:    now.Add(i.ttl).Unix(),
		ID:        rand.Text(),
		Tenant:    i.personas.Tenant,
		Garm:      subject.garm,
	}
	if as != "" {
		agent, ok := i.agents[as]
		switch {
		case !ok && i.isUser(as):
			return "", fmt.Errorf("%w: %q is a user", ErrNotAnAgent, as)
		case !ok:
			return "", fmt.Errorf("%w %q", ErrUnknownAgent, as)
		case !agent.mayActFor[user]:
			return "", fmt.Errorf("%w: %q does not list %q in may_act_for", ErrMayNotActFor, as, user)
		}
		claims.Act = &actorClaim{Subject: agent.subject, Garm: agent.garm}
	}
	if exec != "" {
		claims.Exec = &execClaim{Subject: exec, Issuer: i.issuer}
	}
	return i.sign(claims)
}

func (i *IdP) isUser(handle string) bool {
	_, ok := i.users[handle]
	return ok
}

// sign marshals claims and signs them as a compact JWS with the IdP's key: alg ES256, its kid,
// and typ JWT. Everything the IdP issues, tokens and grants, goes through here.
func (i *IdP) sign(claims any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("idp: marshal claims: %w", err)
	}
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, i.kid); err != nil {
		return "", fmt.Errorf("idp: header: %w", err)
	}
	if err := hdr.Set(jws.TypeKey, "JWT"); err != nil {
		return "", fmt.Errorf("idp: header: %w", err)
	}
	signed, err := jws.Sign(payload, jws.WithKey(jwa.ES256(), i.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("idp: sign: %w", err)
	}
	return string(signed), nil
}

// isPrintable reports whether s is non-empty and free of control characters.
func isPrintable(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}
