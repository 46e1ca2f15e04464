package jetstream

import (
	"context"
	"fmt"

	"github.com/garm-dev/garm/internal/fencedkv"

	"github.com/nats-io/nats.go/jetstream"
)

// Fence makes the stream behind the grants bucket the second fence around
// spent grants (bus permissions are the first): one record per key, and
// the server refuses a second write to a key — a delete or purge marker
// included — and every delete and purge, so that even a client allowed to
// write the bucket cannot make a grant spendable again. A key then goes
// only when the bucket's maximum age (its TTL) removes it. Fence is what
// an operator does with `nats stream edit` (FenceCommand); garmd itself
// changes no stream and only checks (CheckBucket).
func Fence(ctx context.Context, js jetstream.JetStream, bucket string) error {
	return grantsBucket(bucket).ApplyFence(ctx, js)
}

// grantsBucket describes bucket, a spent-grants bucket, for fencedkv.
func grantsBucket(bucket string) fencedkv.Bucket {
	return fencedkv.Bucket{
		Name:   bucket,
		Called: "grants bucket",
		Loss:   "a spent grant could be spent again",
		Create: "create it file-backed, e.g. nats kv add " + bucket + " --storage file " +
			"(without --ttl it keeps spent grants forever; a --ttl must be at least the longest max_grant_age_seconds of any MODE_GRANT tool plus the grant skew), then " + FenceCommand(bucket),
		FenceCommand:  FenceCommand(bucket),
		Fence:         fenced,
		FenceProblems: fenceProblems,
	}
}

// fenced sets cfg's fence.
func fenced(cfg *jetstream.StreamConfig) {
	cfg.MaxMsgsPerSubject = 1
	cfg.Discard = jetstream.DiscardNew
	cfg.DiscardNewPerSubject = true
	cfg.DenyDelete = true
	cfg.DenyPurge = true
	cfg.AllowRollup = false
}

// fenceProblems are what keeps cfg from being fenced.
func fenceProblems(cfg jetstream.StreamConfig) []string {
	var missing []string
	if cfg.MaxMsgsPerSubject != 1 {
		missing = append(missing, fmt.Sprintf("keeps %d records per key, not 1", cfg.MaxMsgsPerSubject))
	}
	if cfg.Discard != jetstream.DiscardNew || !cfg.DiscardNewPerSubject {
		missing = append(missing, "accepts a second write to a key (it needs discard new, per subject)")
	}
	if !cfg.DenyDelete {
		missing = append(missing, "allows deleting records")
	}
	if !cfg.DenyPurge {
		missing = append(missing, "allows purging")
	}
	if cfg.AllowRollup {
		missing = append(missing, "allows roll-ups (purge markers)")
	}
	return missing
}

// FenceCommand is the nats CLI command that fences bucket's stream.
func FenceCommand(bucket string) string {
	return "nats stream edit KV_" + bucket + " --max-msgs-per-subject 1 --discard new --discard-per-subject --deny-delete --deny-purge --no-allow-rollup"
}
