package approvals

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/garm-dev/garm/approvals/pending"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/runtime/wire"
	"golang.org/x/oauth2"
)

// Cookie names. The session cookie is SameSite=Strict; the sign-in cookie must survive the
// identity provider's redirect back, a cross-site navigation with a real IdP, so it is Lax. It
// carries the sign-in under way sealed (seal.go): the server keeps nothing per /login, so no
// number of anonymous /login requests can push out an approver's sign-in before its callback.
const (
	sessionCookie = "garm_approvals_session"
	loginCookie   = "garm_approvals_login"
)

// serveLogin begins a sign-in: authorization code with PKCE S256, a nonce, and a state, all
// sealed into the login cookie of this browser, which the callback must present. next is where
// to go once signed in: the inbox or a request's page, nothing else.
func (s *Service) serveLogin(w http.ResponseWriter, r *http.Request) {
	l := login{
		Verifier: oauth2.GenerateVerifier(), Nonce: randomToken(), State: randomToken(),
		Next: s.localNext(r.URL.Query().Get("next")), Expires: s.cfg.Now().Add(loginTTL).Unix(),
	}
	sealed, err := s.sealer.seal(l)
	if err != nil {
		s.log.Error("approvals: seal a sign-in", "err", err)
		s.message(w, r, http.StatusInternalServerError, "Sign-in unavailable", "A sign-in could not be begun. Try again shortly.", "", "")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: sealed, Path: s.base + CallbackPath, MaxAge: int(loginTTL.Seconds()),
		HttpOnly: true, Secure: s.cfg.secure(), SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, s.oauth.AuthCodeURL(l.State, oidc.Nonce(l.Nonce), oauth2.S256ChallengeOption(l.Verifier)), http.StatusSeeOther)
}

// localNext is next when it is the inbox or a well-formed request page of this service, else
// the inbox: a sign-in never ends on another site.
func (s *Service) localNext(next string) string {
	inbox := s.base + "/"
	if id, ok := strings.CutPrefix(next, s.base+RequestsPath); ok && pending.ValidID(id) {
		return next
	}
	return inbox
}

// idClaims are the claims the service reads from an ID token besides the registered ones: the
// same tenant and garm claims a token for garmd carries.
type idClaims struct {
	Nonce  string `json:"nonce"`
	Tenant string `json:"tenant"`
	Garm   struct {
		Clearance    string   `json:"clearance"`
		Compartments []string `json:"compartments"`
		Kind         string   `json:"kind"`
	} `json:"garm"`
	Act any `json:"act"`
}

// serveCallback finishes a sign-in: this browser's login cookie must open, be unexpired and hold
// the state the identity provider sent back; the code is exchanged with the sealed PKCE verifier,
// and the ID token must verify (issuer, audience = client id, expiry, signature) and carry the
// sealed nonce. The approver is who the configured subject claim says, with the token's tenant,
// clearance and compartments; a delegated identity (act) or a non-user kind is refused.
func (s *Service) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var l login
	opened := false
	if c, err := r.Cookie(loginCookie); err == nil {
		opened = s.sealer.open(c.Value, &l)
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: "", Path: s.base + CallbackPath, MaxAge: -1, HttpOnly: true, Secure: s.cfg.secure(), SameSite: http.SameSiteLaxMode})
	if !opened || !l.live(s.cfg.Now()) || l.State == "" ||
		subtle.ConstantTimeCompare([]byte(l.State), []byte(q.Get("state"))) != 1 {
		s.message(w, r, http.StatusBadRequest, "Sign-in not completed", "This sign-in was not begun here, was already used, or took too long. Nothing was signed in.", s.base+LoginPath, "Sign in again")
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		s.message(w, r, http.StatusUnauthorized, "Sign-in refused", "The identity provider did not sign you in.", s.base+LoginPath, "Sign in again")
		return
	}
	a, expires, err := s.signIn(r.Context(), q.Get("code"), l)
	if err != nil {
		s.log.Warn("approvals: sign-in refused", "err", err)
		s.message(w, r, http.StatusUnauthorized, "Sign-in refused", "Your identity could not be verified, or it may not approve. Nothing was signed in.", s.base+LoginPath, "Sign in again")
		return
	}
	now := s.cfg.Now()
	if limit := now.Add(s.cfg.SessionTTL); limit.Before(expires) {
		expires = limit
	}
	ss, err := s.sessions.create(a, now, expires)
	if err != nil {
		s.log.Warn("approvals: sign-in refused", "approver", a.Subject, "err", err)
		s.message(w, r, http.StatusServiceUnavailable, "Sign-in refused", "Too many approvers are signed in. Nothing was signed in: try again later.", s.base+LoginPath, "Sign in again")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: ss.id, Path: s.base + "/", Expires: expires,
		HttpOnly: true, Secure: s.cfg.secure(), SameSite: http.SameSiteStrictMode,
	})
	s.log.Info("approvals: signed in", "approver", a.Subject, "until", expires)
	// After a cross-site redirect a browser withholds a Strict cookie from the next redirect of
	// the same chain, so only a same-site callback is redirected; otherwise the approver follows
	// a link, a same-site navigation.
	if site := r.Header.Get("Sec-Fetch-Site"); site == "same-origin" || site == "same-site" {
		http.Redirect(w, r, l.Next, http.StatusSeeOther)
		return
	}
	s.message(w, r, http.StatusOK, "Signed in", "You are signed in as "+a.Subject+".", l.Next, "Continue")
}

// signIn exchanges the code and verifies the ID token, answering the approver and when the
// token expires.
func (s *Service) signIn(ctx context.Context, code string, l login) (Approver, time.Time, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient)
	tok, err := s.oauth.Exchange(ctx, code, oauth2.VerifierOption(l.Verifier))
	if err != nil {
		return Approver{}, time.Time{}, fmt.Errorf("exchange the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Approver{}, time.Time{}, errors.New("the token answer has no id_token")
	}
	idt, err := s.verifier.Verify(s.oidcCtx, raw)
	if err != nil {
		return Approver{}, time.Time{}, fmt.Errorf("verify the ID token: %w", err)
	}
	var c idClaims
	if err := idt.Claims(&c); err != nil {
		return Approver{}, time.Time{}, fmt.Errorf("read the ID token's claims: %w", err)
	}
	switch {
	case subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(l.Nonce)) != 1:
		return Approver{}, time.Time{}, errors.New("the ID token's nonce is not this sign-in's")
	case c.Act != nil:
		return Approver{}, time.Time{}, errors.New("the ID token is delegated (act): a delegated identity cannot approve")
	case c.Garm.Kind != "" && c.Garm.Kind != toolv1.PrincipalKind_PRINCIPAL_KIND_USER.String() && !strings.EqualFold(c.Garm.Kind, "USER"):
		return Approver{}, time.Time{}, fmt.Errorf("the ID token's kind is %q: only a person approves", c.Garm.Kind)
	case c.Tenant == "":
		return Approver{}, time.Time{}, errors.New("the ID token names no tenant")
	}
	subject, err := s.garmSubject(idt)
	if err != nil {
		return Approver{}, time.Time{}, err
	}
	if _, ok := wire.ParseClearance(c.Garm.Clearance); !ok {
		return Approver{}, time.Time{}, errors.New("the ID token's garm.clearance is missing or unknown")
	}
	return Approver{Subject: subject, Tenant: c.Tenant, Clearance: c.Garm.Clearance, Compartments: c.Garm.Compartments}, idt.Expiry, nil
}

// garmSubject is the approver's garm subject: the value of the configured subject claim of the
// verified ID token, which must be a non-empty string. Nothing else stands in for it, sub
// included, so four eyes never compares names from two namespaces.
func (s *Service) garmSubject(idt *oidc.IDToken) (string, error) {
	var all map[string]json.RawMessage
	if err := idt.Claims(&all); err != nil {
		return "", fmt.Errorf("read the ID token's claims: %w", err)
	}
	raw, ok := all[s.cfg.SubjectClaim]
	if !ok {
		return "", fmt.Errorf("the ID token has no %q claim, which names the approver's garm subject", s.cfg.SubjectClaim)
	}
	var subject string
	if err := json.Unmarshal(raw, &subject); err != nil || subject == "" {
		return "", fmt.Errorf("the ID token's %q claim is not a non-empty string", s.cfg.SubjectClaim)
	}
	return subject, nil
}

// currentSession is the live session the request's cookie names, if any.
func (s *Service) currentSession(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, false
	}
	return s.sessions.get(c.Value, s.cfg.Now())
}

// serveLogout ends the session: a form with its CSRF token. Without a live session and its token
// nothing is cleared, so another site cannot sign an approver out.
func (s *Service) serveLogout(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.currentSession(r)
	if !ok {
		s.message(w, r, http.StatusOK, "Signed out", "You are not signed in.", s.base+LoginPath, "Sign in")
		return
	}
	if !s.formCSRF(w, r, ss) {
		s.message(w, r, http.StatusForbidden, "Refused", "This form was not sent from this service's own page. You are still signed in.", s.base+"/", "Back to the inbox")
		return
	}
	s.sessions.end(ss.id)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: s.base + "/", MaxAge: -1, HttpOnly: true, Secure: s.cfg.secure(), SameSite: http.SameSiteStrictMode})
	s.render(w, http.StatusOK, "message.html", pageData{Title: "Signed out", Message: "You are signed out.", Link: s.base + LoginPath, LinkText: "Sign in"})
}

// maxForm bounds a posted form: it holds one CSRF token.
const maxForm = 4 << 10

// formCSRF reads the posted form and reports whether its csrf field is the session's token.
func (s *Service) formCSRF(w http.ResponseWriter, r *http.Request, ss *session) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return false
	}
	return len(r.PostForm["csrf"]) == 1 && ss.checkCSRF(r.PostForm.Get("csrf"))
}
