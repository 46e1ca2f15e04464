package devplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/garm-dev/garm/approvals"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
	garmd "github.com/garm-dev/garm/daemon"
	"github.com/garm-dev/garm/internal/loopback"
)

// daemonRun is one running garmd replica.
type daemonRun struct {
	// listen and admin are the addresses it bound, which a restart binds
	// again.
	listen, admin string
	started       bool   // it has been started before
	proc          *child // when it runs as a process (Options.GarmdBinary)
	stop          context.CancelFunc
	done          chan error // as service.done
}

// startDaemon starts garmd on the artifact at cataloguePath, trusting the
// dev IdP for tokens and the approvals service for grants, recording
// approval requests for the approvals service, with the ledger stream, the audit sink,
// notify and the MCP endpoint on, and waits until it answers ready: one
// replica, or Options.Replicas of them behind the round-robin front. Once
// a replica has bound its listeners, a restart (Reload) binds the same
// addresses, so the printed URLs stay true.
func (s *Plane) startDaemon(ctx context.Context) error {
	n := max(s.opts.Replicas, 1)
	first := s.daemons == nil
	if first {
		for i := range n {
			run := &daemonRun{listen: s.opts.Listen, admin: s.opts.AdminListen}
			if n > 1 {
				// The front takes Listen; the replicas take free ports.
				run.listen = loopbackAny(s.opts.Listen)
				if i > 0 {
					run.admin = loopbackAny(s.opts.AdminListen)
				}
			}
			s.daemons = append(s.daemons, run)
		}
	}
	s.urls.Replicas, s.urls.ReplicaAdmins, s.urls.ReplicaPIDs = nil, nil, nil
	for i, run := range s.daemons {
		mcp, err := s.startReplica(ctx, i, run)
		if err != nil {
			return err
		}
		s.urls.Replicas = append(s.urls.Replicas, "http://"+run.listen)
		s.urls.ReplicaAdmins = append(s.urls.ReplicaAdmins, "http://"+run.admin)
		if run.proc != nil {
			s.urls.ReplicaPIDs = append(s.urls.ReplicaPIDs, run.proc.pid())
			s.urls.Logs = s.runDir
		}
		if i == 0 {
			s.urls.Garmd, s.urls.Admin, s.urls.MCP = "http://"+run.listen, "http://"+run.admin, mcp
		}
	}
	if n > 1 && first {
		var targets []*url.URL
		for _, r := range s.urls.Replicas {
			u, err := url.Parse(r)
			if err != nil {
				return err
			}
			targets = append(targets, u)
		}
		var err error
		if s.front, s.frontURL, err = startFront(s.opts.Listen, targets, s.replicaRunning, s.fail); err != nil {
			return err
		}
	}
	if s.front != nil {
		s.urls.Garmd = s.frontURL
		s.urls.MCP = s.frontURL + strings.TrimPrefix(s.urls.MCP, s.urls.Replicas[0])
	}
	return nil
}

// loopbackAny is addr's host with port 0: a free port there.
func loopbackAny(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, "0")
}

// startReplica starts garmd replica i at run's addresses, connected first
// to node i of the bus, records the addresses it bound, and waits until it
// answers ready. It answers its MCP endpoint's URL.
func (s *Plane) startReplica(ctx context.Context, i int, run *daemonRun) (string, error) {
	indefinite := time.Duration(0)
	cfg := garmd.DefaultConfig()
	cfg.Catalogue = s.cataloguePath()
	cfg.CatalogueKeys = s.signer.keys
	// The first start names node i alone, since nats.go shuffles a seed
	// list and the quick-start promises which replica is on which node;
	// the replica learns the other nodes from the cluster and reconnects
	// to them. A restart (Reload) names them all, so it starts while a
	// node is down.
	cfg.NATS = s.bus.nodes[i%len(s.bus.nodes)].url
	if run.started {
		cfg.NATS = s.bus.seedsFrom(i % len(s.bus.nodes))
	}
	run.started = true
	if s.opts.GarmdBinary != "" {
		return s.startReplicaProcess(ctx, i, run, cfg.NATS)
	}
	garmdSeed, err := s.ids.seed(natsperm.GarmdUser)
	if err != nil {
		return "", err
	}
	cfg.NATSNKey = garmdSeed
	cfg.Listen, cfg.AdminListen = run.listen, run.admin
	cfg.Issuers = []string{s.idp.Issuer()}
	cfg.JWKS = []string{s.idpSrv.JWKSURL()}
	cfg.Audience = s.idp.Audience()
	cfg.HashKeyFile = s.hashKeyFile
	cfg.GrantIssuer = s.approvals.svc.GrantIssuer()
	cfg.GrantJWKS = s.urls.Approvals + approvals.JWKSPath
	cfg.Approvals = true
	cfg.ApprovalsURL = s.urls.Approvals
	cfg.ApprovalStateKeyFile = s.approvalStateKeyFile
	cfg.AuditStreamRetention = &indefinite
	cfg.LedgerStream = true
	cfg.Notify = true
	cfg.Limits = true
	cfg.LimitReplicas = s.streamReplicas()
	cfg.MCP = true
	cfg.MinReplicas = s.streamReplicas()
	cfg.Logger = s.logger
	cfg.Guard = loopback.Guard
	if s.garmdTraces != nil {
		// A developer reads each call's whole tree: a span per step.
		cfg.TracerProvider, cfg.TraceSteps = s.garmdTraces, true
	}
	if len(s.daemons) > 1 {
		cfg.Logger = s.logger.With("replica", i+1)
	}

	d, err := garmd.New(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("garmd: %w", err)
	}
	run.listen, run.admin = d.Addr().String(), d.AdminAddr().String()
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	s.daemonMu.Lock()
	run.stop, run.done = stop, done
	s.daemonMu.Unlock()
	go func() {
		err := d.Run(runCtx)
		if runCtx.Err() == nil && !s.closing.Load() {
			s.fail(fmt.Errorf("garmd stopped: %v", err))
			err = nil
		}
		done <- err
	}()
	return d.MCPResource(), waitReady(ctx, "http://"+run.admin+"/readyz")
}

// stopRunningDaemon stops every garmd replica and waits, bounded by ctx,
// until each has.
func (s *Plane) stopRunningDaemon(ctx context.Context) error {
	var errs []error
	for i, run := range s.daemons {
		s.daemonMu.Lock()
		stop, done := run.stop, run.done
		run.stop, run.done = nil, nil
		s.daemonMu.Unlock()
		if stop == nil {
			continue
		}
		stop()
		what := "garmd"
		if len(s.daemons) > 1 {
			what = fmt.Sprintf("garmd replica %d", i+1)
		}
		errs = append(errs, await(ctx, what, done))
	}
	return errors.Join(errs...)
}
