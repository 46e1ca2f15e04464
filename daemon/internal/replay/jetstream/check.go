package jetstream

import (
	"context"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// CheckBucket says what keeps the spent-grant bucket from keeping every
// spent grant as long as it says it does, and returns its TTL: how long it
// keeps a key, 0 meaning forever. The bucket must exist, be file-backed,
// take new keys (not sealed), never discard an old key to make room, and be
// fenced (Fence): one record per key, no second write, no delete or purge. The
// error names each problem and how to fix it; garmd creates and changes no
// bucket.
func CheckBucket(ctx context.Context, js jetstream.JetStream) (ttl time.Duration, err error) {
	_, status, err := grantsBucket(wire.GrantsSpentBucket).Check(ctx, js)
	if err != nil {
		return 0, err
	}
	return status.TTL(), nil
}
