package approvals_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	paymentTool   = "payments.v1.initiate_payment"
	grantAudience = "garm"
	treasurer     = "user:tess@acme-bank.example"
	payerAgent    = "agent:treasury-assistant"
)

// clock is a settable clock for the service; it starts at the real time.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// plane is the approvals service on a real listener, with a real NATS server (the pending
// bucket and GARM_AUDIT), the dev identity provider and a grant key made for the test.
type plane struct {
	svc     *approvals.Service
	base    string
	idp     *idp.IdP
	idpSrv  *idp.Server
	store   *pending.Store
	js      jetstream.JetStream
	clock   *clock
	keyFile string
}

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func startPlane(t *testing.T) *plane {
	t.Helper()
	return startPlaneWith(t, 10*time.Minute)
}

// startPlaneWith is startPlane with sessions bounded by sessionTTL; the dev IdP's ID tokens live
// its default hour.
func startPlaneWith(t *testing.T, sessionTTL time.Duration) *plane {
	t.Helper()
	return startDevPlane(t, func(cfg *approvals.Config) { cfg.SessionTTL = sessionTTL })
}

// startDevPlane is the approvals service signing in through the dev IdP, configured by edit.
func startDevPlane(t *testing.T, edit func(*approvals.Config)) *plane {
	t.Helper()
	personas, err := idp.LoadPersonas(filepath.Join("testdata", "personas.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := idp.New(personas, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := id.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idpSrv.Close() })
	p := startPlaneOn(t, func(cfg *approvals.Config) {
		cfg.OIDCIssuer, cfg.OIDCDiscoveryURL = id.Issuer(), idpSrv.URL()
		edit(cfg)
		if err := id.RegisterClient(cfg.OIDCClientID, cfg.BaseURL+approvals.CallbackPath); err != nil {
			t.Fatal(err)
		}
	})
	p.idp, p.idpSrv = id, idpSrv
	return p
}

// startPlaneOn is the approvals service on a real listener, with a real NATS server, configured
// by edit after the defaults of the tests (the subject claim sub, the test's clock); edit names
// the identity provider and registers the service with it.
func startPlaneOn(t *testing.T, edit func(*approvals.Config)) *plane {
	t.Helper()
	ctx := bounded(t)
	_, js := garmtooltest.ConnectJetStream(t, garmtooltest.StartJetStream(t).URL())
	store, err := pending.Ensure(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: wire.AuditStream, Subjects: []string{wire.AuditStreamSubjects}}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	keyFile := filepath.Join(t.TempDir(), "grant.key")
	if err := approvals.WriteKeyFile(keyFile); err != nil {
		t.Fatal(err)
	}
	clk := &clock{}
	cfg := approvals.Config{
		BaseURL: base, KeyFile: keyFile, GrantAudience: grantAudience,
		OIDCClientID: approvals.DefaultOIDCClientID, SubjectClaim: "sub", Now: clk.Now,
	}
	edit(&cfg)
	svc, err := approvals.New(ctx, cfg, store, approvals.NewAuditStream(js))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: wire.NotifyStream, Subjects: []string{wire.NotifyStreamSubjects}}); err != nil {
		t.Fatal(err)
	}
	svc.SetFeed(approvals.NewNotifyStream(js))
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &plane{svc: svc, base: base, store: store, js: js, clock: clk, keyFile: keyFile}
}

// ask records a payment request as garmd would, by subject acting through act.
func (p *plane) ask(t *testing.T, subject string, act []string, amount string) pending.Request {
	t.Helper()
	r, err := p.store.Ask(bounded(t), pending.Request{
		Tool:                 paymentTool,
		ToolTitle:            "Send a payment",
		ToolDescription:      "Sends money from one of a customer's accounts to a beneficiary's IBAN.",
		ApprovalNotes:        "The approver confirms the account, the amount, the currency and the IBAN.",
		ApproverMinClearance: "CLEARANCE_RESTRICTED",
		ApproverCompartments: []string{"financial"},
		DistinctApprover:     true,
		MaxGrantAgeSeconds:   300,
		Subject:              subject,
		Act:                  act,
		Tenant:               "acme-bank",
		Material: map[string]string{
			"from_account_id": "A-10001", "amount_minor_units": amount,
			"currency_code": "GBP", "beneficiary_iban": "GB29NWBK60161331926819",
		},
		EventID: "ev-" + amount,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// browser is an HTTP client with a cookie jar: one approver's browser.
type browser struct {
	*http.Client
	t *testing.T
}

// signIn signs persona in through the dev IdP's picker, as a browser would.
func (p *plane) signIn(t *testing.T, persona string) *browser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &browser{Client: &http.Client{Jar: jar, Timeout: 20 * time.Second}, t: t}
	resp, err := b.Get(p.base + approvals.LoginPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	picker := resp.Request.URL // the IdP's /authorize, with the service's parameters
	if resp.StatusCode != http.StatusOK || picker.Path != idp.AuthorizePath {
		t.Fatalf("sign-in did not reach the picker: %d at %s", resp.StatusCode, picker)
	}
	form := picker.Query()
	form.Set("persona", persona)
	resp, err = b.PostForm(p.idpSrv.URL()+idp.AuthorizePath, form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Signed in") {
		t.Fatalf("sign-in as %s: %d %s", persona, resp.StatusCode, body)
	}
	return b
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) get(u string) page {
	b.t.Helper()
	resp, err := b.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(body)}
}

func (b *browser) post(u string, form url.Values) page {
	b.t.Helper()
	resp, err := b.PostForm(u, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, resp.Header, string(body)}
}

// csrfOf is the CSRF token in a page's forms.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	const marker = `name="csrf" value="`
	i := strings.Index(body, marker)
	if i < 0 {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	rest := body[i+len(marker):]
	return rest[:strings.IndexByte(rest, '"')]
}
