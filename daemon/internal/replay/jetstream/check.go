package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	const bucket = wire.GrantsSpentBucket
	kv, err := js.KeyValue(ctx, bucket)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return 0, fmt.Errorf("grants bucket %s does not exist; create it file-backed, e.g. nats kv add %s --storage file "+
			"(without --ttl it keeps spent grants forever; a --ttl must be at least the longest max_grant_age_seconds of any MODE_GRANT tool plus the grant skew)",
			bucket, bucket)
	case errors.Is(err, jetstream.ErrBadBucket):
		return 0, fmt.Errorf("grants bucket %s exists but is not a key-value bucket (its stream keeps no value per key); delete it and create it with nats kv add %s --storage file", bucket, bucket)
	case err != nil:
		return 0, fmt.Errorf("grants bucket %s cannot be looked up: %w", bucket, err)
	}
	status, err := kv.Status(ctx)
	if err != nil {
		return 0, fmt.Errorf("grants bucket %s: its status cannot be read: %w", bucket, err)
	}
	cfg := status.Config()
	var errs []error
	if cfg.Storage != jetstream.FileStorage {
		errs = append(errs, fmt.Errorf("grants bucket %s is backed by %s storage, which forgets every spent grant when the server restarts, so a spent grant could be spent again; recreate it with nats kv add %s --storage file",
			bucket, strings.ToLower(cfg.Storage.String()), bucket))
	}
	// KeyValueConfig does not carry the stream's discard policy or seal;
	// the stream's own configuration does.
	if withInfo, ok := status.(interface{ StreamInfo() *jetstream.StreamInfo }); ok && withInfo.StreamInfo() != nil {
		stream := withInfo.StreamInfo().Config
		if stream.Sealed {
			errs = append(errs, fmt.Errorf("grants bucket %s is sealed and takes no new key, so no grant could be spent; point garmd at a bucket that is not", bucket))
		}
		if stream.Discard == jetstream.DiscardOld && (stream.MaxMsgs > 0 || stream.MaxBytes > 0) {
			errs = append(errs, fmt.Errorf("grants bucket %s discards its oldest keys when full (max_msgs %d, max_bytes %d), forgetting spent grants before their TTL; recreate it without limits or with discard new",
				bucket, stream.MaxMsgs, stream.MaxBytes))
		}
		if missing := fenceProblems(stream); len(missing) > 0 {
			errs = append(errs, fmt.Errorf("grants bucket %s is not fenced: its stream %s; a client allowed to write it could make a spent grant spendable again; fence it with %s",
				bucket, strings.Join(missing, ", "), FenceCommand(bucket)))
		}
	} else {
		errs = append(errs, fmt.Errorf("grants bucket %s: its stream's configuration cannot be read, so its fence cannot be checked", bucket))
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return status.TTL(), nil
}
