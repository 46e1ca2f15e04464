package jetstream

import (
	"context"
	"time"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// RetryHorizon is the longest a Sink may go on writing one audit row again
// under the same Nats-Msg-Id (MsgID). GARM_AUDIT's duplicate window must be
// at least this long, or a retry after an ambiguous write could store the
// row twice.
const RetryHorizon = time.Minute

// CheckReplication says what keeps GARM_AUDIT from surviving the loss of a
// server, or from storing a retried row once: fewer replicas than
// r.MinReplicas, or a duplicate window shorter than RetryHorizon.
func CheckReplication(ctx context.Context, js jetstream.JetStream, r streamcheck.Replication) error {
	return streamcheck.CheckReplication(ctx, js, streamcheck.Replicated{
		Noun: "audit stream", Name: wire.AuditStream, MinDuplicates: RetryHorizon,
	}, r)
}
