package idp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// Paths the handler serves.
const (
	JWKSPath     = "/.well-known/jwks.json"
	TokenPath    = "/token"
	GrantPath    = "/grant"
	PersonasPath = "/personas"
)

// tokenParams are the query parameters GET /token accepts; any other is refused, so a
// misspelt "as" cannot quietly yield a token without the actor.
var tokenParams = map[string]bool{"user": true, "as": true, "exec": true}

// Handler serves the key set, tokens, approval grants and the persona file. A method a path
// does not serve is answered 405; errors are short plain text. It serves no OpenID Connect:
// discovery names absolute URLs, which only a started [Server] knows ([IdP.Start]).
func (i *IdP) Handler() http.Handler { return i.handler("") }

// handler is [IdP.Handler], and with a base URL the OpenID Connect endpoints too.
func (i *IdP) handler(base string) http.Handler {
	mux := http.NewServeMux()
	if base != "" {
		mux.HandleFunc("GET "+DiscoveryPath, i.serveDiscovery(base))
		mux.HandleFunc("GET "+AuthorizePath, i.serveAuthorize)
		mux.HandleFunc("POST "+AuthorizePath, i.serveAuthorize)
		mux.HandleFunc("POST "+OIDCTokenPath, i.serveOIDCToken)
	}
	mux.HandleFunc("GET "+JWKSPath, i.serveJWKS)
	mux.HandleFunc("GET "+TokenPath, i.serveToken)
	mux.HandleFunc("POST "+GrantPath, i.serveGrant)
	mux.HandleFunc("GET "+PersonasPath, i.servePersonas)
	return mux
}

func (i *IdP) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, "application/json", i.jwks)
}

func (i *IdP) servePersonas(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, "application/json", i.personasJSON)
}

func (i *IdP) serveToken(w http.ResponseWriter, r *http.Request) {
	user, as, exec, err := tokenQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var token string
	if exec == "" {
		token, err = i.Token(user, as)
	} else {
		token, err = i.TokenWithExec(user, as, exec)
	}
	i.answerIssued(w, "token", token, err)
}

// answerIssued answers a token or grant as text/plain, never cached, or the error that
// prevented it with its status; an unexpected error is logged and not shown.
func (i *IdP) answerIssued(w http.ResponseWriter, what, issued string, err error) {
	if err != nil {
		status := issueErrorStatus(err)
		if status == http.StatusInternalServerError {
			i.log.Error("idp: issue "+what, "err", err)
			http.Error(w, "cannot issue "+what, status)
			return
		}
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeBody(w, "text/plain; charset=utf-8", []byte(issued))
}

// tokenQuery reads user (required), as and exec (optional, but not empty when given), each at
// most once.
func tokenQuery(raw string) (user, as, exec string, err error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "", "", "", errors.New("malformed query")
	}
	for name, values := range q {
		if !tokenParams[name] {
			return "", "", "", fmt.Errorf("unknown parameter %q (want user, as, exec)", name)
		}
		if len(values) != 1 {
			return "", "", "", fmt.Errorf("parameter %q given more than once", name)
		}
		if values[0] == "" {
			return "", "", "", fmt.Errorf("parameter %q is empty", name)
		}
	}
	if !q.Has("user") {
		return "", "", "", errors.New("missing parameter user")
	}
	return q.Get("user"), q.Get("as"), q.Get("exec"), nil
}

// issueErrorStatus maps an [IdP.Token] or [IdP.Grant] error to its status; anything unexpected
// is ours (500).
func issueErrorStatus(err error) int {
	switch {
	case errors.Is(err, ErrUnknownUser), errors.Is(err, ErrUnknownAgent):
		return http.StatusNotFound
	case errors.Is(err, ErrMayNotActFor):
		return http.StatusForbidden
	case errors.Is(err, ErrNotAUser), errors.Is(err, ErrNotAnAgent), errors.Is(err, ErrInvalidRequest):
		return http.StatusBadRequest
	default:
		return http.StatusInternalServerError
	}
}

func writeBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}
