package jetstream

import (
	"context"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckReplication says whether the spent-grant bucket has fewer replicas
// than r.MinReplicas. Spends are never read from a follower: a spend is a
// publish the stream's leader accepts or refuses.
func CheckReplication(ctx context.Context, js jetstream.JetStream, r streamcheck.Replication) error {
	const bucket = wire.GrantsSpentBucket
	return streamcheck.CheckReplication(ctx, js, streamcheck.Replicated{Noun: "grants bucket", Name: bucket, Stream: "KV_" + bucket}, r)
}
