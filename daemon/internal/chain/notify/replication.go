package notify

import (
	"context"

	"github.com/garm-dev/garm/daemon/internal/streamcheck"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckReplication says whether GARM_NOTIFY has fewer replicas than
// r.MinReplicas. Its duplicate window is not checked: a notification is
// published once and never retried.
func CheckReplication(ctx context.Context, js jetstream.JetStream, r streamcheck.Replication) error {
	return streamcheck.CheckReplication(ctx, js, streamcheck.Replicated{Noun: "notify stream", Name: wire.NotifyStream}, r)
}
