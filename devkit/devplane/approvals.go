package devplane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/nats-io/nats.go/jetstream"
)

// approvalsRun is the approvals service running in the plane's process.
type approvalsRun struct {
	svc *approvals.Service
	srv *http.Server
	// stateKeyFile is garmd's MCP requestState key.
	stateKeyFile string
}

// startApprovals runs the approvals service on ApprovalsListen: a grant signing key made for this
// run in the run directory (never anywhere else), its sign-in registered with the dev identity
// provider, the requests in GARM_APPROVALS and the decisions' rows on GARM_AUDIT. garmd trusts it
// as its only grant issuer (decision 0059).
func (s *Plane) startApprovals(ctx context.Context) error {
	if err := checkLoopback(s.opts.ApprovalsListen); err != nil {
		return fmt.Errorf("--approvals-listen %q: %w", s.opts.ApprovalsListen, err)
	}
	js, err := jetstream.New(s.busConn)
	if err != nil {
		return err
	}
	store, err := pending.Open(ctx, js)
	if err != nil {
		return fmt.Errorf("the approvals bucket: %w", err)
	}
	ln, err := net.Listen("tcp", s.opts.ApprovalsListen)
	if err != nil {
		return fmt.Errorf("--approvals-listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	keyFile := filepath.Join(s.runDir, "approvals-grant.key")
	if err := approvals.WriteKeyFile(keyFile); err != nil {
		ln.Close()
		return fmt.Errorf("the approvals service's grant key: %w", err)
	}
	cfg := approvals.Config{
		BaseURL:          base,
		KeyFile:          keyFile,
		GrantAudience:    s.idp.Audience(),
		OIDCIssuer:       s.idp.Issuer(),
		OIDCDiscoveryURL: s.idpSrv.URL(),
		OIDCClientID:     approvals.DefaultOIDCClientID,
		Logger:           s.logger.With("component", "approvals"),
	}
	if err := s.idp.RegisterClient(cfg.OIDCClientID, base+approvals.CallbackPath); err != nil {
		ln.Close()
		return err
	}
	svc, err := approvals.New(ctx, cfg, store, approvals.NewAuditStream(js))
	if err != nil {
		ln.Close()
		return fmt.Errorf("the approvals service: %w", err)
	}
	stateKey := make([]byte, 32)
	rand.Read(stateKey) // never fails: crypto/rand crashes the program rather than return an error
	stateKeyFile := filepath.Join(s.runDir, "approval-state.key")
	if err := os.WriteFile(stateKeyFile, []byte(hex.EncodeToString(stateKey)+"\n"), 0o600); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: readyTimeout, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
	s.approvals = &approvalsRun{svc: svc, srv: srv, stateKeyFile: stateKeyFile}
	s.urls.Approvals = base
	go func() {
		if err := srv.Serve(ln); err != http.ErrServerClosed && !s.closing.Load() {
			s.fail(fmt.Errorf("the approvals service stopped: %v", err))
		}
	}()
	return nil
}

// Approvals is the running approvals service.
func (s *Plane) Approvals() *approvals.Service { return s.approvals.svc }
