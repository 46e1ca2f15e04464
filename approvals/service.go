package approvals

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Paths the service serves, under the path of [Config.BaseURL].
const (
	InboxPath    = "/"
	RequestsPath = "/requests/"
	LoginPath    = "/login"
	CallbackPath = "/callback"
	LogoutPath   = "/logout"
	JWKSPath     = "/.well-known/jwks.json"
	StylePath    = "/static/style.css"
)

//go:embed pages
var pageFiles embed.FS

// pages are the page templates; shown is [visible] for the texts a caller chose (subjects,
// actors, the tenant) outside the material, which marks its rows itself.
var pages = template.Must(template.New("pages").Funcs(template.FuncMap{
	"shown": func(s string) string { v, _ := visible(s); return v },
}).ParseFS(pageFiles, "pages/*.html"))

// Service is the approvals service: approvers sign in, see the requests they may decide, and
// approve or deny them; an approval is a grant garmd accepts.
type Service struct {
	cfg      Config
	base     string // the path of BaseURL, "" at the root
	log      *slog.Logger
	signer   *signer
	requests Requests
	audit    Auditor
	feed     Feed
	sessions *sessions
	sealer   *sealer
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	oidcCtx  context.Context // carries the HTTP client and, for the dev IdP, the issuer override
}

// New validates cfg, reads the signing key and discovers the identity provider (ctx bounds the
// discovery only). requests is where pending requests are read and decided; audit where every
// decision's row is written before the decision is stored.
func New(ctx context.Context, cfg Config, requests Requests, audit Auditor) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if requests == nil || audit == nil {
		return nil, errors.New("approvals: New needs the requests and the audit stream")
	}
	cfg = cfg.withDefaults()
	sgn, err := loadKey(cfg.KeyFile)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(cfg.BaseURL) // validated
	// The provider keeps this context to fetch its key set for as long as the service runs, so
	// it outlives ctx; the HTTP client's timeout bounds each fetch, discovery included.
	oidcCtx := oidc.ClientContext(context.WithoutCancel(ctx), cfg.HTTPClient)
	if cfg.OIDCDiscoveryURL != cfg.OIDCIssuer {
		oidcCtx = oidc.InsecureIssuerURLContext(oidcCtx, cfg.OIDCIssuer)
	}
	seal, err := newSealer(cfg.SealKey)
	if err != nil {
		return nil, err
	}
	provider, err := oidc.NewProvider(oidcCtx, cfg.OIDCDiscoveryURL)
	if err != nil {
		return nil, fmt.Errorf("approvals: discover the identity provider: %w", err)
	}
	return &Service{
		cfg: cfg, base: u.Path, log: cfg.Logger, signer: sgn,
		requests: requests, audit: audit, sessions: newSessions(cfg.MaxSessions, cfg.MaxSessionsPerApprover), sealer: seal,
		oauth: oauth2.Config{
			ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret,
			Endpoint: provider.Endpoint(), RedirectURL: cfg.BaseURL + CallbackPath,
			Scopes: []string{oidc.ScopeOpenID},
		},
		verifier: provider.Verifier(&oidc.Config{ClientID: cfg.OIDCClientID, Now: cfg.Now}),
		oidcCtx:  oidcCtx,
	}, nil
}

// JWKS is the public key set garmd verifies grants with (its --grant-jwks), as served at
// [JWKSPath].
func (s *Service) JWKS() []byte { return append([]byte(nil), s.signer.jwks...) }

// GrantIssuer is the iss of every grant: garmd's --grant-issuer.
func (s *Service) GrantIssuer() string { return s.cfg.GrantIssuer }

// RedirectURI is the URI the identity provider must have registered for the service's client.
func (s *Service) RedirectURI() string { return s.cfg.BaseURL + CallbackPath }

// RequestURL is the page of the request with id: what garmd's approval url is.
func (s *Service) RequestURL(id string) string { return s.cfg.BaseURL + RequestsPath + id }

// Handler serves the service's pages, its key set and its style sheet. Every answer carries the
// security headers of [securityHeaders].
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	b := s.base
	mux.HandleFunc("GET "+b+"/{$}", s.serveInbox)
	mux.HandleFunc("GET "+b+RequestsPath+"{id}", s.serveRequest)
	mux.HandleFunc("POST "+b+RequestsPath+"{id}/approve", s.serveDecision(verdictApprove))
	mux.HandleFunc("POST "+b+RequestsPath+"{id}/deny", s.serveDecision(verdictDeny))
	mux.HandleFunc("GET "+b+FeedPath, s.serveFeed)
	mux.HandleFunc("GET "+b+LoginPath, s.serveLogin)
	mux.HandleFunc("GET "+b+CallbackPath, s.serveCallback)
	mux.HandleFunc("POST "+b+LogoutPath, s.serveLogout)
	mux.HandleFunc("GET "+b+JWKSPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.signer.jwks)
	})
	mux.HandleFunc("GET "+b+StylePath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeFileFS(w, r, pageFiles, "pages/style.css")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { s.notFound(w, r, nil) })
	return securityHeaders(mux)
}

// securityHeaders sets, on every answer: a CSP allowing no script at all, styles and forms
// only from the service itself, and no framing; X-Frame-Options DENY; no referrer; no caching;
// no content sniffing.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}
