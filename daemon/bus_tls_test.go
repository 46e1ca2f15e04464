package garmd_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/devkit/idp"
	"github.com/garm-dev/garm/examples/calculator/calculator"
	calcv1 "github.com/garm-dev/garm/examples/calculator/gen/calc/v1"
	"github.com/garm-dev/garm/internal/testpki"
	"github.com/garm-dev/garm/runtime/garmtool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// startTLSBus starts a NATS server that speaks only mutual TLS and admits
// garmd and the calculator's services with the permissions derived from
// the catalogue, each by user and password.
func startTLSBus(t *testing.T, p *testpki.PKI, set *natsperm.Set) string {
	t.Helper()
	tlsConfig, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: p.Cert, KeyFile: p.Key, CaFile: p.CA, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	var users []*server.User
	for _, id := range set.Identities {
		perms := id.Permissions
		sp := &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: perms.Publish.Allow, Deny: perms.Publish.Deny},
			Subscribe: &server.SubjectPermission{Allow: perms.Subscribe.Allow, Deny: perms.Subscribe.Deny},
		}
		if perms.Responses {
			sp.Response = &server.ResponsePermission{MaxMsgs: natsperm.ResponsesMax}
		}
		users = append(users, &server.User{Username: id.Name, Password: "pw-" + id.Name, Permissions: sp})
	}
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		TLS: true, TLSVerify: true, TLSConfig: tlsConfig, TLSTimeout: 5,
		Users: users,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(waitTimeout) {
		t.Fatal("the TLS NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	return "tls://" + srv.Addr().String()
}

func userFile(t *testing.T, dir, user string) string {
	t.Helper()
	path := filepath.Join(dir, user+".user")
	writeFile(t, path, []byte(user+"\npw-"+user+"\n"))
	return path
}

// TestGarmdAndAToolWorkOverMutualTLSAndAPlaintextClientIsRefused runs the
// calculator and garmd against a bus that speaks only mutual TLS, with a
// CA made for the test and users with the derived permissions: a call
// through garmd — itself served over TLS, with HTTP/2 — reaches the tool,
// the startup report says how garmd authenticated and that TLS is on, and
// a client that does not speak TLS is refused.
func TestGarmdAndAToolWorkOverMutualTLSAndAPlaintextClientIsRefused(t *testing.T) {
	t.Parallel()
	p := testpki.New(t)
	c, err := builder.FromRoots(context.Background(), "../examples/calculator/proto")
	if err != nil {
		t.Fatal(err)
	}
	url := startTLSBus(t, p, natsperm.Derive(c.Artifact))

	tool := garmtool.BusFlags{URL: url, UserFile: userFile(t, p.Dir, natsperm.ToolUser("calc.v1")), TLSCA: p.CA, TLSCert: p.Cert, TLSKey: p.Key}
	toolOpts, err := tool.ConnectOptions()
	if err != nil {
		t.Fatal(err)
	}
	toolConn, err := nats.Connect(url, toolOpts...)
	if err != nil {
		t.Fatalf("the tool's TLS connection: %v", err)
	}
	t.Cleanup(toolConn.Close)
	svc := garmtool.New("calc", "0.1.0", garmtool.WithDrainTimeout(time.Second))
	if err := calcv1.ServeCalculator(svc, calculator.Calculator{}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- svc.Run(ctx, toolConn) }()
	t.Cleanup(func() { stop(); <-served })
	select {
	case <-svc.Ready():
	case err := <-served:
		t.Fatalf("the calculator stopped: %v", err)
	}

	personas, err := idp.LoadPersonas("testdata/personas.yaml")
	if err != nil {
		t.Fatal(err)
	}
	provider, err := idp.New(personas, idp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idpSrv, err := provider.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idpSrv.Close() })
	cataloguePath := filepath.Join(p.Dir, "catalogue.binpb")
	writeFile(t, cataloguePath, c.Bytes)
	keyPath := filepath.Join(p.Dir, "hash.key")
	writeFile(t, keyPath, []byte("a test hash key of more than sixteen bytes\n"))
	logs := &logBuffer{}
	cfg := garmd.DefaultConfig()
	cfg.Catalogue, cfg.HashKeyFile = cataloguePath, keyPath
	cfg.NATS = url
	cfg.NATSUserFile = userFile(t, p.Dir, natsperm.GarmdUser)
	cfg.NATSTLSCA, cfg.NATSTLSCert, cfg.NATSTLSKey = p.CA, p.Cert, p.Key
	cfg.TLSCert, cfg.TLSKey = p.Cert, p.Key
	cfg.Listen, cfg.AdminListen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Issuers, cfg.JWKS = []string{provider.Issuer()}, []string{idpSrv.JWKSURL()}
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	d, err := garmd.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopDaemon := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	t.Cleanup(func() { stopDaemon(); <-ran })

	token, err := provider.Token("public", "")
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: waitTimeout, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: p.Pool},
		ForceAttemptHTTP2: true,
	}}
	req, err := http.NewRequest(http.MethodPost, "https://"+d.Addr().String()+addPath, strings.NewReader(`{"a": 40, "b": 2.5}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 256)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body[:n]) != `{"sum":42.5}` {
		t.Fatalf("a call through garmd over TLS answered %d %s\n%s", resp.StatusCode, body[:n], logs.String())
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("the tool plane answered over %s, want HTTP/2 through TLS", resp.Proto)
	}

	log := logs.String()
	for _, want := range []string{`"msg":"garmd: bus"`, `user \"garmd\" and password from`, `"tls":"on (TLS 1.3)"`, "which may not purge GARM_GRANTS_SPENT", "cannot be asked of the server"} {
		if !strings.Contains(log, want) {
			t.Errorf("the startup report does not say %s:\n%s", want, log)
		}
	}

	refusesPlaintext(t, strings.TrimPrefix(url, "tls://"))
}

// refusesPlaintext speaks the NATS protocol in the clear to addr — what a
// client without TLS does — and holds the server to refusing it: it
// announces that TLS is required and never answers the PING.
func refusesPlaintext(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, waitTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(waitTimeout)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("the server's INFO is %q (%v), want tls_required", info, err)
	}
	if _, err := conn.Write([]byte("CONNECT {\"user\":\"garmd\",\"pass\":\"pw-garmd\",\"verbose\":false}\r\nPING\r\n")); err != nil {
		return // refused already
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // the server closed the plaintext connection
		}
		if strings.HasPrefix(line, "PONG") {
			t.Fatal("the server answered a plaintext client's PING")
		}
	}
}
