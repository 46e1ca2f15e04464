package garmd

import (
	"context"

	auditjs "github.com/garm-dev/garm/daemon/internal/audit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	limitjs "github.com/garm-dev/garm/daemon/internal/chain/limit/jetstream"
	"github.com/garm-dev/garm/daemon/internal/chain/notify"
	ledgerjs "github.com/garm-dev/garm/daemon/internal/ledger/jetstream"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckBus runs, on each stream and bucket garmd writes, the check garmd
// runs on it at start (--ledger-stream, --audit-stream-retention 0, --notify,
// --grant-issuer, --catalogue-keys), and returns each one's verdict by name: nil when garmd
// would accept it. `garm bus init` confirms with it what it created.
func CheckBus(ctx context.Context, js jetstream.JetStream) map[string]error {
	_, grants := replayjs.CheckBucket(ctx, js)
	_, catalogueVersions := versions.Open(ctx, js)
	return map[string]error{
		wire.LedgerStream:      ledgerjs.CheckStream(ctx, js),
		wire.AuditStream:       auditjs.CheckStream(ctx, js, 0),
		wire.NotifyStream:      notify.CheckStream(ctx, js),
		wire.GrantsSpentBucket: grants,
		LimitStreams:           limitjs.Check(ctx, js),
		// --catalogue-keys
		wire.CatalogueVersionsBucket: catalogueVersions,
	}
}

// LimitStreams names the counter streams (GARM_LIMITS_SECOND, _MINUTE,
// _HOUR, _DAY and _CONCURRENCY) in CheckBus's verdicts: one check over all.
const LimitStreams = "GARM_LIMITS_*"

// CreateLimitStreams creates the counter streams garmd counts limits on,
// with replicas copies, fenced; those that exist are checked. garm bus init,
// the dev plane and tests call it.
func CreateLimitStreams(ctx context.Context, js jetstream.JetStream, replicas int) error {
	return limitjs.Create(ctx, js, replicas)
}

// LimitStreamConfigs are the counter streams' configurations, with
// replicas copies: what CreateLimitStreams creates.
func LimitStreamConfigs(replicas int) []jetstream.StreamConfig {
	var out []jetstream.StreamConfig
	for _, s := range limit.Streams() {
		out = append(out, limitjs.StreamConfig(s, replicas))
	}
	return out
}

// WriteStreams are the streams garmd writes, as its start-up checks want
// them (docs/operators.md), with replicas copies: the ledger, the audit
// stream — refusing new rows rather than dropping old ones, keeping them
// for ever — and the notify stream, all file-backed. garm bus init and the
// dev plane create them from here.
func WriteStreams(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{Name: wire.LedgerStream, Subjects: []string{wire.LedgerStreamSubjects}, Storage: jetstream.FileStorage, Replicas: replicas},
		{Name: wire.AuditStream, Subjects: []string{wire.AuditStreamSubjects}, Storage: jetstream.FileStorage,
			Discard: jetstream.DiscardNew, MaxAge: 0, Replicas: replicas},
		{Name: wire.NotifyStream, Subjects: []string{wire.NotifyStreamSubjects}, Storage: jetstream.FileStorage, Replicas: replicas},
	}
}
