package devplane

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/approvals/pending"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	"github.com/garm-dev/garm/internal/loopback"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// approvalsRun is the approvals service running in the plane's process.
type approvalsRun struct {
	svc *approvals.Service
	srv *http.Server
}

// startApprovals runs the approvals service on ApprovalsListen, behind the loopback guard: a grant signing key made for this
// run in the run directory (never anywhere else), its sign-in registered with the dev identity
// provider, the requests in GARM_APPROVALS and the decisions' rows on GARM_AUDIT. garmd trusts it
// as its only grant issuer (decision 0059).
func (s *Plane) startApprovals(ctx context.Context) error {
	if err := checkLoopback(s.opts.ApprovalsListen); err != nil {
		return fmt.Errorf("--approvals-listen %q: %w", s.opts.ApprovalsListen, err)
	}
	identity := natsperm.Approvals()
	seed, err := s.ids.seed(identity.Name)
	if err != nil {
		return err
	}
	conn, err := s.bus.connect("garm dev approvals", seed, nats.CustomInboxPrefix(identity.InboxPrefix))
	if err != nil {
		return fmt.Errorf("the approvals service's bus connection: %w", err)
	}
	s.approvalsConn = conn
	js, err := jetstream.New(conn)
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
		SubjectClaim:     "sub",
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
	svc.SetFeed(approvals.NewNotifyStream(js))
	// Guarded from outside: the service is a deployment's component, and a deployment's inbox
	// answers at its own name.
	srv := &http.Server{Handler: loopback.Guard(svc.Handler()), ReadHeaderTimeout: readyTimeout, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn)}
	s.approvals = &approvalsRun{svc: svc, srv: srv}
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
