package garmd

import (
	"context"

	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	replayjs "github.com/garm-dev/garm/daemon/internal/replay/jetstream"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// FenceGrantsBucket fences the spent-grants bucket (wire.GrantsSpentBucket)
// that js reaches: its stream keeps one record per key and refuses a second
// write, a delete or a purge, for good — the server will not take the fence
// down again. garmd refuses to start on an unfenced bucket. The dev stack
// and tests call this after creating the bucket; an operator runs
// FenceGrantsBucketCommand instead (docs/operators.md).
func FenceGrantsBucket(ctx context.Context, js jetstream.JetStream) error {
	return replayjs.Fence(ctx, js, wire.GrantsSpentBucket)
}

// FenceGrantsBucketCommand is the nats CLI command that fences the
// spent-grants bucket.
func FenceGrantsBucketCommand() string { return replayjs.FenceCommand(wire.GrantsSpentBucket) }

// EnsureCatalogueVersionsBucket creates the catalogue versions bucket
// (wire.CatalogueVersionsBucket) when it is missing, with the given number
// of replicas, and fences it: garm bus init, the dev plane and tests call
// it; garmd --catalogue-keys only checks it.
func EnsureCatalogueVersionsBucket(ctx context.Context, js jetstream.JetStream, replicas int) error {
	_, err := versions.Ensure(ctx, js, replicas)
	return err
}
