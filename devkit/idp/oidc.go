package idp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The minimal OpenID Connect provider (decision 0057): discovery, the authorization code flow
// with PKCE S256 only, and an ID token signed with the IdP's one key. It serves the approvals
// service's sign-in in development; it is not an identity provider for anything else.
const (
	// DiscoveryPath is the OpenID Connect discovery document.
	DiscoveryPath = "/.well-known/openid-configuration"
	// AuthorizePath shows the persona picker and, posted, issues a code.
	AuthorizePath = "/authorize"
	// OIDCTokenPath exchanges a code for an ID token: POST, where GET is [TokenPath]'s token for
	// garmd.
	OIDCTokenPath = TokenPath
	// CodeTTL is how long an authorization code can be exchanged.
	CodeTTL = time.Minute
	// MaxCodes bounds the codes waiting to be exchanged; a sign-in beyond it is refused.
	MaxCodes = 1024
)

// Errors of the authorization code flow.
var (
	// ErrInvalidClient: an unknown client, or a redirect URI not registered for it exactly.
	ErrInvalidClient = errors.New("invalid client")
	// ErrInvalidGrant: a code that is unknown, expired, already used, or presented with another
	// client, redirect URI or PKCE verifier than it was issued for.
	ErrInvalidGrant = errors.New("invalid grant")
)

// oidcState is the IdP's registered clients and outstanding codes.
type oidcState struct {
	mu      sync.Mutex
	clients map[string][]string // client id → registered redirect URIs
	codes   map[string]authCode
}

// authCode is what a code was issued for; it is exchanged once.
type authCode struct {
	client, redirect, challenge string
	user, nonce                 string
	expires                     time.Time
}

// RegisterClient lets client id sign users in with the authorization code flow, redirecting only
// to exactly redirectURI (an absolute http or https URL without a fragment). A client may
// register several redirect URIs.
func (i *IdP) RegisterClient(id, redirectURI string) error {
	if !isPrintable(id) {
		return fmt.Errorf("%w: client id must be non-empty and printable", ErrInvalidRequest)
	}
	u, err := url.Parse(redirectURI)
	// The URI is written into the picker's Content-Security-Policy, so nothing that could end
	// or widen a source expression is allowed in it.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" ||
		strings.ContainsAny(redirectURI, " \t\r\n;,'\"*") {
		return fmt.Errorf("%w: redirect URI %q is not an absolute http(s) URL without a fragment, spaces, quotes, commas, semicolons or stars", ErrInvalidRequest, redirectURI)
	}
	i.oidc.mu.Lock()
	defer i.oidc.mu.Unlock()
	if i.oidc.clients == nil {
		i.oidc.clients = map[string][]string{}
	}
	if !slices.Contains(i.oidc.clients[id], redirectURI) {
		i.oidc.clients[id] = append(i.oidc.clients[id], redirectURI)
	}
	return nil
}

// checkClient refuses an unknown client and a redirect URI not registered for it, compared
// exactly, byte for byte.
func (i *IdP) checkClient(id, redirectURI string) error {
	i.oidc.mu.Lock()
	defer i.oidc.mu.Unlock()
	uris, ok := i.oidc.clients[id]
	if !ok {
		return fmt.Errorf("%w: unknown client", ErrInvalidClient)
	}
	if !slices.Contains(uris, redirectURI) {
		return fmt.Errorf("%w: the redirect URI is not registered for this client", ErrInvalidClient)
	}
	return nil
}

// authorization is a checked authorization request.
type authorization struct {
	client, redirect, state, nonce, challenge string
}

// checkAuthorization reads an authorization request: response_type code, a registered client
// and its exact redirect URI, scope with openid, a state, and a PKCE S256 challenge. A client
// error comes first, so that nothing is ever sent to an unregistered redirect URI.
func (i *IdP) checkAuthorization(q url.Values) (authorization, error) {
	a := authorization{
		client: q.Get("client_id"), redirect: q.Get("redirect_uri"), state: q.Get("state"),
		nonce: q.Get("nonce"), challenge: q.Get("code_challenge"),
	}
	if err := i.checkClient(a.client, a.redirect); err != nil {
		return a, err
	}
	switch {
	case q.Get("response_type") != "code":
		return a, fmt.Errorf("%w: response_type must be code", ErrInvalidRequest)
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		return a, fmt.Errorf("%w: scope must include openid", ErrInvalidRequest)
	case a.state == "" || !isPrintable(a.state):
		return a, fmt.Errorf("%w: state is required", ErrInvalidRequest)
	case a.nonce != "" && !isPrintable(a.nonce):
		return a, fmt.Errorf("%w: nonce must be printable", ErrInvalidRequest)
	case q.Get("code_challenge_method") != "S256":
		return a, fmt.Errorf("%w: PKCE is required, with code_challenge_method S256", ErrInvalidRequest)
	case len(a.challenge) != 43:
		return a, fmt.Errorf("%w: code_challenge must be a base64url SHA-256 (43 characters)", ErrInvalidRequest)
	}
	if _, err := base64.RawURLEncoding.Strict().DecodeString(a.challenge); err != nil {
		return a, fmt.Errorf("%w: code_challenge is not base64url", ErrInvalidRequest)
	}
	return a, nil
}

// issueCode records a code for user, answering the redirect that carries it and the state.
func (i *IdP) issueCode(a authorization, user string) (string, error) {
	if _, ok := i.users[user]; !ok {
		return "", fmt.Errorf("%w %q", ErrUnknownUser, user)
	}
	now := i.now()
	code := rand.Text() + rand.Text()
	i.oidc.mu.Lock()
	defer i.oidc.mu.Unlock()
	if i.oidc.codes == nil {
		i.oidc.codes = map[string]authCode{}
	}
	for c, ac := range i.oidc.codes {
		if !now.Before(ac.expires) {
			delete(i.oidc.codes, c)
		}
	}
	if len(i.oidc.codes) >= MaxCodes {
		return "", errors.New("too many sign-ins waiting to be completed")
	}
	i.oidc.codes[code] = authCode{
		client: a.client, redirect: a.redirect, challenge: a.challenge,
		user: user, nonce: a.nonce, expires: now.Add(CodeTTL),
	}
	u, _ := url.Parse(a.redirect) // checked at registration
	q := u.Query()
	q.Set("code", code)
	q.Set("state", a.state)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// exchange spends code: it must exist, be unexpired, and be presented by the client it was
// issued to, with the same redirect URI and the verifier of its challenge. A code is removed at
// its first presentation, whatever the outcome, so a code that leaked is worth one try.
func (i *IdP) exchange(code, client, redirect, verifier string) (authCode, error) {
	i.oidc.mu.Lock()
	ac, ok := i.oidc.codes[code]
	delete(i.oidc.codes, code)
	i.oidc.mu.Unlock()
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	switch {
	case !ok:
		return ac, fmt.Errorf("%w: unknown or already used code", ErrInvalidGrant)
	case !i.now().Before(ac.expires):
		return ac, fmt.Errorf("%w: the code expired", ErrInvalidGrant)
	case ac.client != client:
		return ac, fmt.Errorf("%w: the code was issued to another client", ErrInvalidGrant)
	case ac.redirect != redirect:
		return ac, fmt.Errorf("%w: the code was issued for another redirect URI", ErrInvalidGrant)
	case len(verifier) < 43 || len(verifier) > 128:
		return ac, fmt.Errorf("%w: code_verifier must be 43 to 128 characters", ErrInvalidGrant)
	case subtle.ConstantTimeCompare([]byte(challenge), []byte(ac.challenge)) != 1:
		return ac, fmt.Errorf("%w: the code_verifier does not match the challenge", ErrInvalidGrant)
	}
	return ac, nil
}

// idTokenClaims is an OpenID Connect ID token with the persona's tenant and garm claim, as a
// token for garmd carries them, so a relying party reads an approver's authority as garmd does.
type idTokenClaims struct {
	Issuer   string    `json:"iss"`
	Subject  string    `json:"sub"`
	Audience string    `json:"aud"`
	IssuedAt int64     `json:"iat"`
	Expiry   int64     `json:"exp"`
	AuthTime int64     `json:"auth_time"`
	Nonce    string    `json:"nonce,omitempty"`
	Tenant   string    `json:"tenant"`
	Garm     garmClaim `json:"garm"`
}

// idToken signs the ID token of a spent code: aud is the client, exp the IdP's token TTL.
func (i *IdP) idToken(ac authCode) (string, error) {
	p := i.users[ac.user]
	now := i.now().Truncate(time.Second)
	return i.sign(idTokenClaims{
		Issuer: i.issuer, Subject: p.subject, Audience: ac.client,
		IssuedAt: now.Unix(), Expiry: now.Add(i.ttl).Unix(), AuthTime: now.Unix(),
		Nonce: ac.nonce, Tenant: i.personas.Tenant, Garm: p.garm,
	})
}
