package garmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/garm-dev/garm/daemon/internal/approval"
	"github.com/garm-dev/garm/daemon/internal/audit"
	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/chain/grant"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// optionalSteps are the parts of the chain an operator turns on: approval
// grants (step 5) behind --grant-issuer, the audit sink behind
// --audit-stream-retention, notify (step 10) behind --notify. Each is
// checked against the bus at startup — the bucket or stream it writes must
// exist and be fit for it — and what is on becomes the mount allowlist's
// catalogue.Steps.
type optionalSteps struct {
	steps  catalogue.Steps
	grants *grant.Verifier
	// desk is where approval requests are left and decided grants
	// collected; nil without --approvals.
	desk     *approval.Desk
	audit    audit.Sink
	notifier *notify.Notifier
	// limiter counts calls against their tools' limits; nil without
	// --limits.
	limiter *limit.Limiter
}

// openOptional checks and builds every optional step the configuration
// turns on, reporting every problem at once.
func (d *Daemon) openOptional(ctx context.Context) error {
	cfg := d.cfg
	d.opt.steps.ToolTimeout = cfg.ToolTimeout
	if !cfg.Grants() && !cfg.Approvals && cfg.AuditStreamRetention == nil && !cfg.Notify && !cfg.Limits {
		return nil
	}
	js, err := d.jetStream()
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var problems []error
	if cfg.Grants() {
		if err := d.openGrants(ctx, js); err != nil {
			problems = append(problems, fmt.Errorf("--grant-issuer: %w", err))
		}
	}
	if cfg.Approvals {
		if err := d.openApprovals(ctx, js); err != nil {
			problems = append(problems, fmt.Errorf("--approvals: %w", err))
		}
	}
	if r := cfg.AuditStreamRetention; r != nil {
		if err := auditjs.CheckStream(ctx, js, *r); err != nil {
			problems = append(problems, fmt.Errorf("--audit-stream-retention: %w", err))
		} else {
			d.opt.audit = countingSink{auditjs.New(js, auditjs.Options{Logger: d.logger}), &d.ops}
			d.opt.steps.AuditRetention = r
		}
	}
	if cfg.Notify {
		if err := notify.CheckStream(ctx, js); err != nil {
			problems = append(problems, fmt.Errorf("--notify: %w", err))
		} else {
			d.opt.notifier = notify.New(js, notify.Options{Logger: d.logger})
			d.opt.steps.Notify = true
		}
	}
	if cfg.Limits {
		if err := d.openLimits(ctx, js); err != nil {
			problems = append(problems, fmt.Errorf("--limits: %w", err))
		}
	}
	return errors.Join(problems...)
}

// openLimits checks the counter streams and builds the limit step over
// them, reading the bus's clock once before the first call.
func (d *Daemon) openLimits(ctx context.Context, js jetstream.JetStream) error {
	if err := limitjs.Check(ctx, js); err != nil {
		return err
	}
	l := limit.New(limit.Config{Counter: limitjs.New(js), Replicas: d.cfg.LimitReplicas, Bound: d.cfg.LimitBound})
	if err := l.Calibrate(ctx); err != nil {
		return fmt.Errorf("reading the bus's clock: %w", err)
	}
	d.opt.limiter = l
	d.opt.steps.Limits = true
	return nil
}

// openGrants checks the spent-grant bucket, reading back how long it keeps
// a spent grant, and builds step 5's verifier over it.
func (d *Daemon) openGrants(ctx context.Context, js jetstream.JetStream) error {
	ttl, err := replayjs.CheckBucket(ctx, js)
	if err != nil {
		return err
	}
	v, err := grant.New(grant.Config{
		Issuer:   d.cfg.GrantIssuer,
		JWKSURL:  d.cfg.GrantKeySet(),
		Audience: d.cfg.GrantAud(),
		Spender:  countingSpender{replayjs.New(js, wire.GrantsSpentBucket), &d.ops},
		Logger:   d.logger,
	})
	if err != nil {
		return err
	}
	d.opt.grants = v
	d.opt.steps.Grants = true
	d.opt.steps.SpentFor = ttl
	d.opt.steps.GrantSkew = grant.DefaultSkew
	return nil
}

// openApprovals binds the approval-request bucket, checking it is fit for
// requests that expire with their grant age and fenced; garmd creates no
// bucket.
func (d *Daemon) openApprovals(ctx context.Context, js jetstream.JetStream) error {
	desk, err := approval.Open(ctx, js, d.cfg.ApprovalsURL)
	if err != nil {
		return err
	}
	d.opt.desk = desk
	return nil
}
