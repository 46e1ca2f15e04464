package approvals_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/devkit/idp"
)

func TestAnonymousSignInFloodsCannotEvictAnApproversSignInUnderWay(t *testing.T) {
	p := startPlane(t)
	jar, _ := cookiejar.New(nil)
	b := &browser{Client: &http.Client{Jar: jar, Timeout: 20 * time.Second}, t: t}
	resp, err := b.Get(p.base + approvals.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	picker := resp.Request.URL
	// Strangers begin many more sign-ins than the service ever held at once, each a fresh
	// browser, before the approver's identity provider answers.
	stranger := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i := range 2500 {
		resp, err := stranger.Get(p.base + approvals.LoginPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("stranger's sign-in %d: %d", i, resp.StatusCode)
		}
	}
	form := picker.Query()
	form.Set("persona", "approver")
	resp, err = b.PostForm(p.idpSrv.URL()+idp.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in") {
		t.Fatalf("the approver's sign-in after the flood: %d\n%s", resp.StatusCode, body)
	}
}

func TestASignInIsFinishedOnlyByTheBrowserThatBeganItAndOnlyOnce(t *testing.T) {
	p := startPlane(t)
	begin := func(b *browser) url.Values {
		t.Helper()
		resp, err := b.Get(p.base + approvals.LoginPath)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Request.URL.Query()
	}
	jar, _ := cookiejar.New(nil)
	noFollow := func(r *http.Request, _ []*http.Request) error {
		if r.URL.Path == approvals.CallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}
	victim := &browser{Client: &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: noFollow}, t: t}
	form := begin(victim)
	form.Set("persona", "approver")
	resp, err := victim.PostForm(p.idpSrv.URL()+idp.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	callback := resp.Header.Get("Location")
	// Another browser with its own sign-in under way, or none, cannot finish the victim's.
	otherJar, _ := cookiejar.New(nil)
	other := &browser{Client: &http.Client{Jar: otherJar, Timeout: 20 * time.Second}, t: t}
	begin(other)
	if got := other.get(callback); got.status != http.StatusBadRequest {
		t.Errorf("another browser finished the sign-in: %d", got.status)
	}
	fresh := &browser{Client: &http.Client{Timeout: 20 * time.Second}, t: t}
	if got := fresh.get(callback); got.status != http.StatusBadRequest {
		t.Errorf("a browser without a sign-in finished one: %d", got.status)
	}
	// The victim's own cookie with the state altered does not finish it either.
	u, _ := url.Parse(callback)
	q := u.Query()
	q.Set("state", q.Get("state")+"x")
	u.RawQuery = q.Encode()
	cookies := victim.Jar.Cookies(u)
	altered, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	for _, c := range cookies {
		altered.AddCookie(c)
	}
	if resp, err := http.DefaultClient.Do(altered); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a callback with another state: %v %v", resp.StatusCode, err)
	}
	// Its own sign-in, after its time at the identity provider ran out, does not either.
	p.clock.Advance(11 * time.Minute)
	if got := victim.get(callback); got.status != http.StatusBadRequest {
		t.Errorf("a sign-in older than its bound was finished: %d", got.status)
	}
}

func TestOneApproverSigningInManyTimesSignsNoOtherApproverOut(t *testing.T) {
	p := startDevPlane(t, func(cfg *approvals.Config) { cfg.MaxSessions, cfg.MaxSessionsPerApprover = 4, 2 })
	adam := p.signIn(t, "approver")
	var sue []*browser
	for range 10 {
		sue = append(sue, p.signIn(t, "second"))
	}
	if got := adam.get(p.base + "/"); got.status != http.StatusOK || !strings.Contains(got.body, `id="approver"`) {
		t.Fatalf("the other approver was signed out: %d", got.status)
	}
	if got := sue[len(sue)-1].get(p.base + "/"); got.status != http.StatusOK || !strings.Contains(got.body, `id="approver"`) {
		t.Fatalf("the approver's newest session was dropped: %d", got.status)
	}
}

func TestSigningOutNeedsTheSessionsCSRFToken(t *testing.T) {
	p := startPlane(t)
	b := p.signIn(t, "approver")
	token := csrfOf(t, b.get(p.base+"/").body)
	for name, form := range map[string]url.Values{
		"no token":        {},
		"another token":   {"csrf": {token + "x"}},
		"the token twice": {"csrf": {token, token}},
	} {
		got := b.post(p.base+approvals.LogoutPath, form)
		if got.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, got.status)
		}
		for _, c := range got.header.Values("Set-Cookie") {
			if strings.HasPrefix(c, "garm_approvals_session=") {
				t.Errorf("%s: the session cookie was cleared: %s", name, c)
			}
		}
		if inbox := b.get(p.base + "/"); inbox.status != http.StatusOK || !strings.Contains(inbox.body, `id="approver"`) {
			t.Fatalf("%s signed the approver out", name)
		}
	}
	if got := b.post(p.base+approvals.LogoutPath, url.Values{"csrf": {token}}); got.status != http.StatusOK {
		t.Fatalf("signing out with the token: %d", got.status)
	}
	resp, err := (&http.Client{Jar: b.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(p.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the inbox after signing out: %d, want the sign-in redirect", resp.StatusCode)
	}
}
