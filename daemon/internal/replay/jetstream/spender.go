package jetstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/daemon/internal/replay"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Spender spends grants by creating their keys in a key-value bucket,
// with create-only writes.
type Spender struct {
	js     jetstream.JetStream
	bucket string
}

// New is a Spender creating keys in the bucket of that name through js,
// normally the bucket CheckBucket accepted.
func New(js jetstream.JetStream, bucket string) *Spender {
	return &Spender{js: js, bucket: bucket}
}

// Spend creates key, valued with the time it was spent. A key that has
// ever been written is replay.ErrSpent — a delete or purge marker on it
// included, so forgetting a spent grant by writing such a marker does not
// make it spendable again; any other error is wrapped and means nothing is
// known about key.
//
// It is a publish that the server accepts only while the key's subject
// holds no message (Nats-Expected-Last-Subject-Sequence 0), not
// KeyValue.Create, which reads the key back after a conflict and writes
// over a deleted one. So garmd needs no right to read or delete keys.
func (s *Spender) Spend(ctx context.Context, key string) error {
	msg := &nats.Msg{
		Subject: "$KV." + s.bucket + "." + key,
		Data:    time.Now().UTC().AppendFormat(nil, time.RFC3339),
		Header:  nats.Header{jetstream.ExpectedLastSubjSeqHeader: []string{"0"}},
	}
	_, err := s.js.PublishMsg(ctx, msg)
	var apiErr *jetstream.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant):
		return replay.ErrSpent
	}
	return fmt.Errorf("spending a grant in bucket %s: %w", s.bucket, err)
}

var _ replay.Spender = (*Spender)(nil)
