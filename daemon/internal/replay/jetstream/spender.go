package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/daemon/internal/replay"
	"github.com/nats-io/nats.go/jetstream"
)

// Spender spends grants by creating their keys in a key-value bucket.
type Spender struct {
	kv jetstream.KeyValue
}

// New is a Spender creating keys in kv, normally the bucket CheckBucket
// accepted.
func New(kv jetstream.KeyValue) *Spender { return &Spender{kv: kv} }

// Spend creates key, valued with the time it was spent. A key that exists
// is replay.ErrSpent; any other error is wrapped and means nothing is known
// about key.
func (s *Spender) Spend(ctx context.Context, key string) error {
	value := time.Now().UTC().AppendFormat(nil, time.RFC3339)
	_, err := s.kv.Create(ctx, key, value)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyExists):
		return replay.ErrSpent
	}
	return fmt.Errorf("spending a grant in bucket %s: %w", s.kv.Bucket(), err)
}

var _ replay.Spender = (*Spender)(nil)
