//go:build conformance

package minter_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/daemon/conformance/minter"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/runtime/garmtooltest"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// stsClientID is the client the fixture STS registers.
const stsClientID = "garm-conformance-client"

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func loadSuite(t *testing.T, name string) *minter.Suite {
	t.Helper()
	s, err := minter.LoadSuite(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run runs cfg, logging the report's lines, and answers the report.
func run(t *testing.T, cfg minter.Config) minter.Report {
	t.Helper()
	var out strings.Builder
	cfg.Out = &out
	rep, err := minter.Run(bounded(t), cfg)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// requirePass fails the test unless every case of the report passed.
func requirePass(t *testing.T, rep minter.Report) {
	t.Helper()
	if !rep.OK() {
		t.Fatalf("%s: %d passed, %d failed", rep.Suite, rep.Passed(), rep.Failed())
	}
}

// startDevIdP is the dev identity provider on loopback serving personas.
func startDevIdP(t *testing.T, personas string, o idp.Options) (*idp.IdP, *idp.Server) {
	t.Helper()
	p, err := idp.LoadPersonas(filepath.Join("testdata", personas))
	if err != nil {
		t.Fatal(err)
	}
	id, err := idp.New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := id.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return id, srv
}

// startApprovals is the approvals service on loopback, with an embedded
// NATS server holding the pending bucket and GARM_AUDIT, its approvers
// signing in through a dev identity provider.
func startApprovals(t *testing.T) *approvalsDriver {
	t.Helper()
	ctx := bounded(t)
	id, idpSrv := startDevIdP(t, "approvals-personas.yaml", idp.Options{})
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
	cfg := approvals.Config{
		BaseURL: base, KeyFile: keyFile, GrantAudience: "garm",
		OIDCClientID: approvals.DefaultOIDCClientID, SubjectClaim: "sub",
		OIDCIssuer: id.Issuer(), OIDCDiscoveryURL: idpSrv.URL(),
	}
	if err := id.RegisterClient(cfg.OIDCClientID, cfg.BaseURL+approvals.CallbackPath); err != nil {
		t.Fatal(err)
	}
	svc, err := approvals.New(ctx, cfg, store, approvals.NewAuditStream(js))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &approvalsDriver{base: base, store: store}
}

// startFixtureSTS is the fixture STS, its client registered to the dev
// identity provider's support persona, and the driver holding that
// client's key.
func startFixtureSTS(t *testing.T, ignoreClientAuth bool) (*minter.FormPostDriver, *idp.Server) {
	t.Helper()
	id, idpSrv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := startSTS(t, id, map[string]stsClient{stsClientID: {key: &key.PublicKey, user: "support"}}, ignoreClientAuth)
	return &minter.FormPostDriver{Endpoint: s.url, ClientID: stsClientID, KeyID: "client-1", Key: key}, idpSrv
}

func TestTheDevIdPPassesItsSuite(t *testing.T) {
	t.Parallel()
	_, srv := startDevIdP(t, "devidp-personas.yaml", idp.Options{})
	requirePass(t, run(t, minter.Config{
		Suite: loadSuite(t, "devidp.yaml"), Endpoint: srv.URL(), Driver: &minter.GetDriver{Endpoint: srv.URL()},
	}))
}

func TestTheApprovalsServicePassesItsSuite(t *testing.T) {
	t.Parallel()
	d := startApprovals(t)
	requirePass(t, run(t, minter.Config{Suite: loadSuite(t, "approvals.yaml"), Endpoint: d.base, Driver: d}))
}

func TestTheFormPostDriverPassesAgainstAFixtureSTS(t *testing.T) {
	t.Parallel()
	d, idpSrv := startFixtureSTS(t, false)
	requirePass(t, run(t, minter.Config{
		Suite: loadSuite(t, "sts.yaml"), Endpoint: d.Endpoint, Driver: d,
		Vars: map[string]string{"jwks": idpSrv.JWKSURL()},
	}))
}
