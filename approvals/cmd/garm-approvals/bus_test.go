package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/internal/testpki"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestTheServiceJoinsABusThatSpeaksOnlyMutualTLSAsItsOwnUser runs
// garm-approvals, as its command line does, against a NATS server that
// requires TLS with a client certificate and admits the approvals identity
// by user and password with its derived permissions: the service connects
// with --nats-tls-ca, --nats-tls-cert, --nats-tls-key and --nats-user-file,
// says so, and serves. Without the CA, or with a wrong password, it does
// not start.
func TestTheServiceJoinsABusThatSpeaksOnlyMutualTLSAsItsOwnUser(t *testing.T) {
	dir := t.TempDir()
	pki := testpki.New(t)
	ca, cert, key := pki.CA, pki.Cert, pki.Key
	url := startTLSBus(t, ca, cert, key)
	provider, err := idp.New(mustPersonas(t), idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := provider.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idpSrv.Shutdown(t.Context()) })
	grantKey := writeGrantKey(t, dir)
	userFile := filepath.Join(dir, "approvals.user")
	writeFile(t, userFile, "approvals\npw-approvals\n")
	wrongUser := filepath.Join(dir, "wrong.user")
	writeFile(t, wrongUser, "approvals\nnot-its-password\n")
	args := func(extra ...string) []string {
		return append([]string{
			"--listen", "127.0.0.1:0", "--base-url", "http://127.0.0.1:1", "--key", grantKey, "--grant-audience", "garm",
			"--oidc-issuer", provider.Issuer(), "--oidc-discovery-url", idpSrv.URL(), "--subject-claim", "sub",
			"--nats", url,
		}, extra...)
	}

	var log syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args("--nats-user-file", userFile, "--nats-tls-ca", ca, "--nats-tls-cert", cert, "--nats-tls-key", key), &log)
	}()
	addr := waitFor(t, &log, done, `garm-approvals: serving" addr=`)
	resp, err := http.Get("http://" + addr + "/.well-known/jwks.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the service does not serve its key set: %v %v", resp, err)
	}
	resp.Body.Close()
	for _, want := range []string{`auth="user and password from ` + userFile, `tls="on (TLS 1.3)"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the start-up log does not say %s:\n%s", want, log.String())
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after a clean stop:\n%s", code, log.String())
	}

	for name, extra := range map[string][]string{
		"no CA":          {"--nats-user-file", userFile, "--nats-tls-cert", cert, "--nats-tls-key", key},
		"wrong password": {"--nats-user-file", wrongUser, "--nats-tls-ca", ca, "--nats-tls-cert", cert, "--nats-tls-key", key},
		"no certificate": {"--nats-user-file", userFile, "--nats-tls-ca", ca},
	} {
		var out bytes.Buffer
		if code := run(t.Context(), args(extra...), &out); code != 1 || !strings.Contains(out.String(), "--nats (authenticating with") {
			t.Errorf("%s: exit %d, want 1 naming the bus:\n%s", name, code, out.String())
		}
	}
}

// startTLSBus starts a JetStream server that speaks only mutual TLS, with
// the approvals identity's derived permissions and an operator user that
// creates its bucket, as garm bus init would.
func startTLSBus(t *testing.T, ca, cert, key string) string {
	t.Helper()
	tlsConfig, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cert, KeyFile: key, CaFile: ca, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	perms := natsperm.Approvals().Permissions
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		JetStream: true, StoreDir: t.TempDir(),
		TLS: true, TLSVerify: true, TLSConfig: tlsConfig, TLSTimeout: 5,
		Users: []*server.User{
			{Username: "admin", Password: "pw-admin"},
			{Username: "approvals", Password: "pw-approvals", Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: perms.Publish.Allow, Deny: perms.Publish.Deny},
				Subscribe: &server.SubjectPermission{Allow: perms.Subscribe.Allow, Deny: perms.Subscribe.Deny},
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("the TLS NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	url := "tls://" + srv.Addr().String()
	nc, err := nats.Connect(url, nats.UserInfo("admin", "pw-admin"), nats.RootCAs(ca), nats.ClientCert(cert, key))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pending.Ensure(t.Context(), js, 1); err != nil {
		t.Fatal(err)
	}
	return url
}

func writeGrantKey(t *testing.T, dir string) string {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "grant.key")
	writeFile(t, path, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	return path
}

func mustPersonas(t *testing.T) *idp.Personas {
	t.Helper()
	p, err := idp.LoadPersonas("../../../examples/bank/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits, bounded, for a log line starting with prefix and answers
// the rest of its first field.
func waitFor(t *testing.T, log *syncBuffer, done chan int, prefix string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, rest, ok := strings.Cut(log.String(), prefix); ok {
			addr, _, _ := strings.Cut(rest, " ")
			return addr
		}
		select {
		case code := <-done:
			t.Fatalf("garm-approvals exited %d:\n%s", code, log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("garm-approvals did not serve:\n%s", log.String())
	return ""
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
