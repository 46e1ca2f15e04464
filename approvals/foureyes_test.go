package approvals_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
)

// persona is what the foreign identity provider says of a person: an opaque sub of its own and
// their garm subject in garm_subject.
func persona(sub, garmSubject string) map[string]any {
	c := map[string]any{
		"sub": sub, "tenant": "acme-bank",
		"garm": map[string]any{"clearance": "CLEARANCE_RESTRICTED", "compartments": []string{"financial"}, "kind": "PRINCIPAL_KIND_USER"},
	}
	if garmSubject != "" {
		c["garm_subject"] = garmSubject
	}
	return c
}

func TestFourEyesHoldsWithAnIdentityProviderThatNamesPeopleItsOwnWay(t *testing.T) {
	f := startForeignIdP(t)
	p := startPlaneOn(t, func(cfg *approvals.Config) {
		cfg.OIDCIssuer, cfg.SubjectClaim = f.srv.URL, "garm_subject"
	})
	// The treasurer's own payment: garmd's token named her user:tess@…, the ID token names her
	// 00u-tess and says she is user:tess@… in garm_subject.
	r := p.ask(t, treasurer, []string{payerAgent}, "125000")
	tess, signedIn := f.signInAs(t, p, persona("00u-tess", treasurer))
	if signedIn.status != http.StatusOK || !strings.Contains(signedIn.body, treasurer) {
		t.Fatalf("the treasurer's sign-in: %d\n%s", signedIn.status, signedIn.body)
	}
	missing := notFoundBody(t, p, tess)
	if got := tess.get(p.svc.RequestURL(r.ID)); got.status != http.StatusNotFound || got.body != missing {
		t.Errorf("the treasurer sees her own payment's page: %d", got.status)
	}
	csrf := csrfOf(t, tess.get(p.base+"/").body)
	if got := tess.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {csrf}}); got.status != http.StatusNotFound {
		t.Errorf("the treasurer approving her own payment: %d, want 404", got.status)
	}
	if _, d, _ := p.store.Get(bounded(t), r.ID); d != nil {
		t.Fatalf("the requester approved her own payment: %+v", d)
	}

	// Another person approves it, and the grant names them by their garm subject.
	adam, _ := f.signInAs(t, p, persona("00u-adam", "user:adam@acme-bank.example"))
	pg := adam.get(p.svc.RequestURL(r.ID))
	if pg.status != http.StatusOK {
		t.Fatalf("another approver's page: %d", pg.status)
	}
	if got := adam.post(p.svc.RequestURL(r.ID)+"/approve", url.Values{"csrf": {csrfOf(t, pg.body)}}); got.status != http.StatusOK {
		t.Fatalf("another approver's approval: %d", got.status)
	}
	_, d, err := p.store.Get(bounded(t), r.ID)
	if err != nil || d == nil || d.Verdict != pending.Approved || d.Approver != "user:adam@acme-bank.example" {
		t.Fatalf("decision %+v (%v), want approved by user:adam@acme-bank.example", d, err)
	}
	if g := verifyGrant(t, p, d.Grant)["garm_grant"].(map[string]any); g["approver"] != "user:adam@acme-bank.example" {
		t.Errorf("the grant's approver is %v", g["approver"])
	}
}

func TestASignInWhoseIDTokenDoesNotNameTheGarmSubjectIsRefused(t *testing.T) {
	f := startForeignIdP(t)
	p := startPlaneOn(t, func(cfg *approvals.Config) {
		cfg.OIDCIssuer, cfg.SubjectClaim = f.srv.URL, "garm_subject"
	})
	for name, claims := range map[string]map[string]any{
		"without the claim":   persona("00u-adam", ""),
		"with an empty claim": func() map[string]any { c := persona("00u-adam", ""); c["garm_subject"] = ""; return c }(),
		"with a number":       func() map[string]any { c := persona("00u-adam", ""); c["garm_subject"] = 7; return c }(),
		"with a list": func() map[string]any {
			c := persona("00u-adam", "")
			c["garm_subject"] = []string{"user:adam"}
			return c
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			b, got := f.signInAs(t, p, claims)
			if got.status != http.StatusUnauthorized || !strings.Contains(got.body, "Sign-in refused") {
				t.Errorf("sign-in: %d, want 401\n%s", got.status, got.body)
			}
			u, _ := url.Parse(p.base)
			for _, c := range b.Jar.Cookies(u) {
				if c.Name == "garm_approvals_session" {
					t.Error("a session cookie was set")
				}
			}
		})
	}
}

func TestTheServiceRefusesToStartWithoutASubjectClaim(t *testing.T) {
	err := approvals.Config{
		BaseURL: "https://approvals.example", KeyFile: "k", GrantAudience: "garm",
		OIDCIssuer: "https://idp.example", OIDCClientID: "c",
	}.Validate()
	if err == nil || !strings.Contains(err.Error(), "--subject-claim") {
		t.Errorf("Validate: %v, want --subject-claim named", err)
	}
}
