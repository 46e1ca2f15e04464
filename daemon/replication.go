package garmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/garm-dev/garm/approvals/pending"
	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
)

// maxReplicas is the most replicas JetStream keeps of a stream.
const maxReplicas = 5

func (c Config) replicationProblems() []string {
	if c.MinReplicas < 1 || c.MinReplicas > maxReplicas {
		return []string{fmt.Sprintf("--min-replicas %d is outside [1, %d], the replicas JetStream can keep of a stream", c.MinReplicas, maxReplicas)}
	}
	return nil
}

// checkReplication checks the replicas (and, for the ledger and audit
// streams, the duplicate window) of every stream and bucket the
// configuration uses, reporting every problem at once. A stream with one
// replica on a clustered JetStream is a warning in the log.
func (d *Daemon) checkReplication(ctx context.Context) error {
	cfg := d.cfg
	type check struct {
		flag string
		run  func(context.Context) error
	}
	var checks []check
	js, err := d.jetStream()
	if err != nil {
		return fmt.Errorf("JetStream: %w", err)
	}
	r := streamcheck.Replication{MinReplicas: cfg.MinReplicas, Logger: d.logger}
	if cfg.LedgerStream {
		checks = append(checks, check{"--ledger-stream", func(ctx context.Context) error { return ledgerjs.CheckReplication(ctx, js, r) }})
	}
	if cfg.AuditStreamRetention != nil {
		checks = append(checks, check{"--audit-stream-retention", func(ctx context.Context) error { return auditjs.CheckReplication(ctx, js, r) }})
	}
	if cfg.Notify {
		checks = append(checks, check{"--notify", func(ctx context.Context) error { return notify.CheckReplication(ctx, js, r) }})
	}
	if cfg.Grants() {
		checks = append(checks, check{"--grant-issuer", func(ctx context.Context) error { return replayjs.CheckReplication(ctx, js, r) }})
	}
	if cfg.Approvals {
		approvals := streamcheck.Replicated{Noun: "approvals bucket", Name: pending.Bucket, Stream: "KV_" + pending.Bucket}
		checks = append(checks, check{"--approvals", func(ctx context.Context) error { return streamcheck.CheckReplication(ctx, js, approvals, r) }})
	}
	if cfg.Limits {
		for _, name := range wire.LimitStreams() {
			counters := streamcheck.Replicated{Noun: "limit counter stream", Name: name}
			checks = append(checks, check{"--limits", func(ctx context.Context) error { return streamcheck.CheckReplication(ctx, js, counters, r) }})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	var problems []error
	for _, c := range checks {
		if err := c.run(ctx); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", c.flag, err))
		}
	}
	return errors.Join(problems...)
}
