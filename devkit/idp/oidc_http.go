package idp

import (
	"encoding/json"
	"errors"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// pageSecurity is sent with the persona picker: no script, no frames, nothing loaded from
// elsewhere, and its form posting only back to the IdP, which may redirect only to the client's
// registered redirect URI (form-action governs the redirect too).
func pageSecurity(h http.Header, redirect string) {
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+redirect+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// discovery is the OpenID Connect discovery document of a server at base.
type discovery struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	JWKSURI                           string   `json:"jwks_uri"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	SubjectTypesSupported             []string `json:"subject_types_supported"`
	IDTokenSigningAlgValuesSupported  []string `json:"id_token_signing_alg_values_supported"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClaimsSupported                   []string `json:"claims_supported"`
}

func (i *IdP) serveDiscovery(base string) http.HandlerFunc {
	body, _ := json.Marshal(discovery{ // a struct of strings always marshals
		Issuer:                            i.issuer,
		AuthorizationEndpoint:             base + AuthorizePath,
		TokenEndpoint:                     base + OIDCTokenPath,
		JWKSURI:                           base + JWKSPath,
		ResponseTypesSupported:            []string{"code"},
		SubjectTypesSupported:             []string{"public"},
		IDTokenSigningAlgValuesSupported:  []string{"ES256"},
		ScopesSupported:                   []string{"openid"},
		GrantTypesSupported:               []string{"authorization_code"},
		CodeChallengeMethodsSupported:     []string{"S256"},
		TokenEndpointAuthMethodsSupported: []string{"none"},
		ClaimsSupported:                   []string{"iss", "sub", "aud", "iat", "exp", "auth_time", "nonce", "tenant", "garm"},
	})
	return func(w http.ResponseWriter, _ *http.Request) { writeBody(w, "application/json", body) }
}

var pickerPage = template.Must(template.New("picker").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in — garm dev identity provider</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}button{display:block;margin:.5em 0;padding:.5em 1em}</style>
</head><body>
<h1>Sign in as a persona</h1>
<p>The dev identity provider signs you in as one of its user personas. {{.Client}} asked.</p>
<form method="post" action="{{.Action}}">
{{range $k, $v := .Params}}<input type="hidden" name="{{$k}}" value="{{$v}}">
{{end}}{{range .Users}}<button type="submit" name="persona" value="{{.Handle}}">{{.Handle}} <small>({{.Subject}})</small></button>
{{end}}</form>
</body></html>
`))

// authorizeParams are the parameters an authorization request may carry; the picker posts them
// back unchanged.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"}

type pickerUser struct{ Handle, Subject string }

// serveAuthorize shows the persona picker (GET) or issues a code for the persona picked (POST).
// A request naming an unknown client or an unregistered redirect URI is answered here with 400
// and never redirected.
func (i *IdP) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	var q url.Values
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, MaxGrantBody)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "malformed form", http.StatusBadRequest)
			return
		}
		q = r.PostForm
	} else {
		q = r.URL.Query()
	}
	for name, values := range q {
		if len(values) != 1 {
			http.Error(w, "parameter "+quoteShort(name)+" given more than once", http.StatusBadRequest)
			return
		}
	}
	a, err := i.checkAuthorization(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method == http.MethodGet {
		params := map[string]string{}
		for _, name := range authorizeParams {
			if q.Has(name) {
				params[name] = q.Get(name)
			}
		}
		var users []pickerUser
		for _, handle := range slices.Sorted(maps.Keys(i.users)) {
			users = append(users, pickerUser{Handle: handle, Subject: i.users[handle].subject})
		}
		pageSecurity(w.Header(), a.redirect)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = pickerPage.Execute(w, map[string]any{"Client": a.client, "Action": AuthorizePath, "Params": params, "Users": users})
		return
	}
	to, err := i.issueCode(a, q.Get("persona"))
	switch {
	case errors.Is(err, ErrUnknownUser):
		http.Error(w, "no such persona", http.StatusBadRequest)
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	default:
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, to, http.StatusFound)
	}
}

// tokenResponse is the token endpoint's answer (RFC 6749 5.1, OpenID Connect 3.1.3.3).
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	IDToken     string `json:"id_token"`
}

// oauthError answers an RFC 6749 5.2 error.
func oauthError(w http.ResponseWriter, status int, code, description string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": description})
}

// serveOIDCToken exchanges a code for an ID token (and, as access token, the persona's token
// for garmd). The client is public: it authenticates by its PKCE verifier alone.
func (i *IdP) serveOIDCToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxGrantBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "malformed form")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only authorization_code")
		return
	}
	client := f.Get("client_id")
	if client == "" {
		// golang.org/x/oauth2 may send a public client's id as the basic-auth user.
		client, _, _ = r.BasicAuth()
	}
	ac, err := i.exchange(f.Get("code"), client, f.Get("redirect_uri"), f.Get("code_verifier"))
	if err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", strings.TrimPrefix(err.Error(), ErrInvalidGrant.Error()+": "))
		return
	}
	idToken, err := i.idToken(ac)
	if err != nil {
		i.log.Error("idp: sign ID token", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "cannot issue the ID token")
		return
	}
	access, err := i.Token(ac.user, "")
	if err != nil {
		i.log.Error("idp: issue access token", "err", err)
		oauthError(w, http.StatusInternalServerError, "server_error", "cannot issue the access token")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	body, _ := json.Marshal(tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(i.ttl.Seconds()), IDToken: idToken})
	writeBody(w, "application/json", body)
}
