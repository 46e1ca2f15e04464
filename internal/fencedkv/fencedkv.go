package fencedkv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A Bucket describes one fenced key-value bucket for its checks and the
// messages they give.
type Bucket struct {
	// Name is the bucket's name.
	Name string
	// Called is how messages name it, e.g. "grants bucket".
	Called string
	// Loss completes "so …": what losing its records would let happen,
	// e.g. "a spent grant could be spent again".
	Loss string
	// Create is what a message about a missing bucket says to do.
	Create string
	// FenceCommand is the nats CLI command that fences its stream.
	FenceCommand string
	// Fence sets the fence on its stream's configuration.
	Fence func(*jetstream.StreamConfig)
	// FenceProblems are what keeps a configuration from being fenced, one
	// phrase each completing "its stream …".
	FenceProblems func(jetstream.StreamConfig) []string
}

// Stream is the name of the stream behind the bucket.
func (b Bucket) Stream() string { return "KV_" + b.Name }

// Ensure creates the bucket with cfg when it is missing and fences it;
// created says whether it was created. cfg.Bucket must be b.Name.
func (b Bucket) Ensure(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (created bool, err error) {
	if cfg.Bucket != b.Name {
		return false, fmt.Errorf("creating %s %s: the configuration names bucket %q", b.Called, b.Name, cfg.Bucket)
	}
	_, err = js.KeyValue(ctx, b.Name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		created = true
		_, err = js.CreateKeyValue(ctx, cfg)
	}
	if err != nil {
		return false, fmt.Errorf("creating %s %s: %w", b.Called, b.Name, err)
	}
	return created, b.ApplyFence(ctx, js)
}

// ApplyFence fences the bucket's stream, as an operator does with
// FenceCommand.
func (b Bucket) ApplyFence(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, b.Stream())
	if err != nil {
		return fmt.Errorf("fencing %s %s: %w", b.Called, b.Name, err)
	}
	cfg := s.CachedInfo().Config
	b.Fence(&cfg)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("fencing %s %s: %w", b.Called, b.Name, err)
	}
	return nil
}

// Check binds the existing bucket and checks it (see the package
// documentation); the error names every problem found and how to fix it.
func (b Bucket) Check(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, jetstream.KeyValueStatus, error) {
	kv, err := js.KeyValue(ctx, b.Name)
	switch {
	case errors.Is(err, jetstream.ErrBucketNotFound):
		return nil, nil, fmt.Errorf("%s %s does not exist; %s", b.Called, b.Name, b.Create)
	case errors.Is(err, jetstream.ErrBadBucket):
		return nil, nil, fmt.Errorf("%s %s exists but is not a key-value bucket (its stream keeps no value per key); delete it, then %s", b.Called, b.Name, b.Create)
	case err != nil:
		return nil, nil, fmt.Errorf("%s %s cannot be looked up: %w", b.Called, b.Name, err)
	}
	status, err := kv.Status(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: its status cannot be read: %w", b.Called, b.Name, err)
	}
	var errs []error
	if storage := status.Config().Storage; storage != jetstream.FileStorage {
		errs = append(errs, fmt.Errorf("%s %s is backed by %s storage, not file-backed, which the server empties when it restarts, so %s; recreate it with --storage file",
			b.Called, b.Name, strings.ToLower(storage.String()), b.Loss))
	}
	// KeyValueConfig carries neither the stream's discard policy, nor its
	// seal, nor its fence; the stream's own configuration does.
	withInfo, ok := status.(interface{ StreamInfo() *jetstream.StreamInfo })
	if !ok || withInfo.StreamInfo() == nil {
		errs = append(errs, fmt.Errorf("%s %s: its stream's configuration cannot be read, so its fence cannot be checked", b.Called, b.Name))
	} else {
		stream := withInfo.StreamInfo().Config
		if stream.Sealed {
			errs = append(errs, fmt.Errorf("%s %s is sealed and takes no new key; point garm at one that is not", b.Called, b.Name))
		}
		if stream.Discard == jetstream.DiscardOld && (stream.MaxMsgs > 0 || stream.MaxBytes > 0) {
			errs = append(errs, fmt.Errorf("%s %s discards its oldest keys when full (max_msgs %d, max_bytes %d), so %s; recreate it without limits or with discard new",
				b.Called, b.Name, stream.MaxMsgs, stream.MaxBytes, b.Loss))
		}
		if missing := b.FenceProblems(stream); len(missing) > 0 {
			errs = append(errs, fmt.Errorf("%s %s is not fenced: its stream %s, so a client allowed to write it could remove records, and %s; fence it with: %s",
				b.Called, b.Name, strings.Join(missing, ", "), b.Loss, b.FenceCommand))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return kv, status, nil
}
