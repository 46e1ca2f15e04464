package approvals_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/devkit/idp"
)

// notFoundBody is what b is answered for a request that does not exist.
func notFoundBody(t *testing.T, p *plane, b *browser) string {
	t.Helper()
	id, err := pending.NewID()
	if err != nil {
		t.Fatal(err)
	}
	nf := b.get(p.svc.RequestURL(id))
	if nf.status != http.StatusNotFound {
		t.Fatalf("a missing request: %d, want 404", nf.status)
	}
	return nf.body
}

func TestARequestAnApproverMayNotDecideAnswersExactlyWhatAMissingOneAnswers(t *testing.T) {
	p := startPlane(t)
	own := p.ask(t, treasurer, []string{payerAgent}, "125000")
	for _, persona := range []string{"treasurer", "uncompartmented", "junior"} {
		t.Run(persona, func(t *testing.T) {
			b := p.signIn(t, persona)
			missing := notFoundBody(t, p, b)
			if inbox := b.get(p.base + "/"); inbox.status != http.StatusOK || !strings.Contains(inbox.body, `id="empty"`) || strings.Contains(inbox.body, own.ID) {
				t.Errorf("the inbox shows %s a request they may not decide:\n%s", persona, inbox.body)
			}
			got := b.get(p.svc.RequestURL(own.ID))
			if got.status != http.StatusNotFound || got.body != missing {
				t.Errorf("the request's page: %d, and the body differs from a missing request's: %v", got.status, got.body != missing)
			}
			pg := b.get(p.base + "/")
			post := b.post(p.svc.RequestURL(own.ID)+"/approve", url.Values{"csrf": {csrfOf(t, pg.body)}})
			if post.status != http.StatusNotFound || post.body != missing {
				t.Errorf("approving: %d, want the missing request's 404", post.status)
			}
		})
	}
	if _, d, _ := p.store.Get(bounded(t), own.ID); d != nil {
		t.Fatalf("a decision was stored by someone who may not decide: %+v", d)
	}
}

func TestForgedAndAlteredRequestIDsAreNotFound(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	b := p.signIn(t, "approver")
	missing := notFoundBody(t, p, b)
	csrf := csrfOf(t, b.get(p.base+"/").body)
	flipped := []byte(r.ID)
	flipped[0] = map[bool]byte{true: 'b', false: 'a'}[flipped[0] == 'a']
	for name, id := range map[string]string{
		"one character changed": string(flipped),
		"upper case":            strings.ToUpper(r.ID),
		"too short":             r.ID[:25],
		"too long":              r.ID + "a",
		"a key of the bucket":   "req." + r.ID,
		"a wildcard":            "*",
		"a path":                "..%2f" + r.ID,
		"empty":                 "",
	} {
		got := b.get(p.base + approvals.RequestsPath + id)
		if got.status != http.StatusNotFound || got.body != missing {
			t.Errorf("%s (%q): GET %d, want the missing request's 404", name, id, got.status)
		}
		if post := b.post(p.base+approvals.RequestsPath+id+"/approve", url.Values{"csrf": {csrf}}); post.status != http.StatusNotFound {
			t.Errorf("%s (%q): POST %d, want 404", name, id, post.status)
		}
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("a forged id decided the real request: %+v", d)
	}
}

func TestADecisionWithoutTheSessionsCSRFTokenIsRefused(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	adam := p.signIn(t, "approver")
	sue := p.signIn(t, "second")
	adamsToken := csrfOf(t, adam.get(p.svc.RequestURL(r.ID)).body)
	sueToken := csrfOf(t, sue.get(p.svc.RequestURL(r.ID)).body)
	for name, form := range map[string]url.Values{
		"no token":                           {},
		"an empty token":                     {"csrf": {""}},
		"a wrong token":                      {"csrf": {strings.Repeat("A", len(adamsToken))}},
		"another approver's token":           {"csrf": {sueToken}},
		"the token twice, one of them wrong": {"csrf": {"x", adamsToken}},
	} {
		if got := adam.post(p.svc.RequestURL(r.ID)+"/approve", form); got.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, got.status)
		}
	}
	// A post without any session (a cross-site form, which a SameSite=Strict cookie leaves
	// without one) is refused too.
	anon := &browser{Client: &http.Client{}, t: t}
	if got := anon.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {adamsToken}}); got.status != http.StatusUnauthorized {
		t.Errorf("no session: %d, want 401", got.status)
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("a decision was stored without its CSRF token: %+v", d)
	}
}

func TestAnotherApproversSessionCookieDecidesNothingForThem(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	adam := p.signIn(t, "approver")
	junior := p.signIn(t, "junior")
	adamsToken := csrfOf(t, adam.get(p.svc.RequestURL(r.ID)).body)
	// The uncleared approver's cookie with the cleared approver's token: the token is bound to
	// the other session.
	if got := junior.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {adamsToken}}); got.status != http.StatusForbidden {
		t.Errorf("junior's cookie with adam's token: %d, want 403", got.status)
	}
	// A made-up cookie is no session.
	forged := &browser{Client: &http.Client{}, t: t}
	req, _ := http.NewRequest(http.MethodPost, p.svc.RequestURL(r.ID)+"/approve", strings.NewReader(url.Values{"csrf": {adamsToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "garm_approvals_session", Value: adamsToken})
	resp, err := forged.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the CSRF token as a session id: %d, want 401", resp.StatusCode)
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("a decision was stored through another's session: %+v", d)
	}
}

func TestAnApproverWhoseSessionExpiredDecidesNothing(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	b := p.signIn(t, "approver")
	token := csrfOf(t, b.get(p.svc.RequestURL(r.ID)).body)
	p.clock.Advance(11 * time.Minute) // past the session's 10 minutes
	got := b.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {token}})
	if got.status != http.StatusUnauthorized || !strings.Contains(got.body, "Nothing was decided") {
		t.Fatalf("an expired session: %d\n%s", got.status, got.body)
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("a decision was stored by an expired session: %+v", d)
	}
	if pg := b.get(p.base + "/"); pg.status != http.StatusOK || !strings.Contains(pg.body, "Sign in as a persona") {
		t.Errorf("an expired session is not sent to sign in again: %d", pg.status)
	}
}

func TestEveryPageCarriesTheSecurityHeaders(t *testing.T) {
	p := startPlane(t)
	r := p.ask(t, treasurer, nil, "125000")
	b := p.signIn(t, "approver")
	anon := &browser{Client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, t: t}
	token := csrfOf(t, b.get(p.base+"/").body)
	pages := map[string]page{
		"inbox":                  b.get(p.base + "/"),
		"request":                b.get(p.svc.RequestURL(r.ID)),
		"not found":              b.get(p.base + "/nowhere"),
		"refused decision":       b.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{}),
		"jwks":                   b.get(p.base + approvals.JWKSPath),
		"style":                  b.get(p.base + approvals.StylePath),
		"signed out inbox":       anon.get(p.base + "/"),
		"login":                  anon.get(p.base + approvals.LoginPath),
		"callback without state": anon.get(p.base + approvals.CallbackPath),
		"logout":                 b.post(p.base+approvals.LogoutPath, url.Values{"csrf": {token}}),
	}
	for name, pg := range pages {
		csp := pg.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %s", name, csp, want)
			}
		}
		for h, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
			if got := pg.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", name, h, got, want)
			}
		}
		if strings.Contains(strings.ToLower(pg.body), "<script") {
			t.Errorf("%s: the page holds a script", name)
		}
	}
}

func TestTheSessionCookieIsHttpOnlyAndStrict(t *testing.T) {
	p := startPlane(t)
	b := p.signIn(t, "approver")
	u, _ := url.Parse(p.base)
	var found bool
	for _, c := range b.Jar.Cookies(u) {
		found = found || c.Name == "garm_approvals_session"
	}
	if !found {
		t.Fatal("no session cookie")
	}
	// The jar hides attributes; read the Set-Cookie of a fresh sign-in's callback directly.
	resp, err := (&http.Client{Jar: b.Jar}).Get(p.base + approvals.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	form := resp.Request.URL.Query()
	form.Set("persona", "approver")
	noFollow := &http.Client{Jar: b.Jar, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == approvals.CallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err = noFollow.PostForm(p.idpSrv.URL()+"/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback, err := http.NewRequest(http.MethodGet, resp.Header.Get("Location"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Jar.Cookies(callback.URL) {
		callback.AddCookie(c)
	}
	resp, err = http.DefaultTransport.RoundTrip(callback)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var set string
	for _, line := range resp.Header.Values("Set-Cookie") {
		if strings.HasPrefix(line, "garm_approvals_session=") {
			set = line
		}
	}
	if !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Strict") || strings.Contains(set, "Secure") {
		t.Errorf("session cookie over plain http: %q", set)
	}
}

func TestASessionEndsWithItsIDTokenHoweverLongSessionsMayLast(t *testing.T) {
	p := startPlaneWith(t, 24*time.Hour)
	r := p.ask(t, treasurer, nil, "125000")
	b := p.signIn(t, "approver")
	token := csrfOf(t, b.get(p.svc.RequestURL(r.ID)).body)
	p.clock.Advance(idp.DefaultTokenTTL + time.Second)
	if got := b.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {token}}); got.status != http.StatusUnauthorized {
		t.Fatalf("a decision after the ID token expired: %d, want 401", got.status)
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("a decision was stored after the ID token expired: %+v", d)
	}
}
