package jetstream

import (
	"context"
	"time"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// RetryHorizon is the longest a Recorder may go on publishing one batch
// again under the same Nats-Msg-Id. The ledger stream's duplicate window
// must be at least this long, or a retry after an ambiguous publish could
// store the batch twice.
const RetryHorizon = time.Minute

// CheckReplication says what keeps the ledger stream from surviving the
// loss of a server, or from storing a retried batch once: fewer replicas
// than r.MinReplicas, or a duplicate window shorter than RetryHorizon.
func CheckReplication(ctx context.Context, js jetstream.JetStream, r streamcheck.Replication) error {
	return streamcheck.CheckReplication(ctx, js, streamcheck.Replicated{
		Noun: "ledger stream", Name: wire.LedgerStream, MinDuplicates: RetryHorizon,
	}, r)
}
