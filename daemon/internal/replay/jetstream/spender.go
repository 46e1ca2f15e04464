package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/daemon/internal/busoutcome"
	"github.com/garm-dev/garm/daemon/internal/replay"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bounds of one spend's attempts; the caller's context bounds the whole.
const (
	// attemptTimeout bounds one create or one read-back, so that a spend
	// whose first answer is lost has time to read back and try again
	// within the call's deadline.
	attemptTimeout = 2 * time.Second
	// retryPause separates attempts after an unknown outcome.
	retryPause = 50 * time.Millisecond
)

// Spender spends grants by creating their keys in a key-value bucket,
// with create-only writes whose value names the call that spent them.
type Spender struct {
	js     jetstream.JetStream
	bucket string
}

// New is a Spender creating keys in the bucket of that name through js,
// normally the bucket CheckBucket accepted.
func New(js jetstream.JetStream, bucket string) *Spender {
	return &Spender{js: js, bucket: bucket}
}

// Spend creates key, valued with callID, the call spending it. A key that
// has ever been written is replay.ErrSpent — a delete or purge marker on it
// included, so forgetting a spent grant by writing such a marker does not
// make it spendable again.
//
// It is a publish that the server accepts only while the key's subject
// holds no message (Nats-Expected-Last-Subject-Sequence 0), not
// KeyValue.Create, which writes over a deleted key. No outcome is guessed:
// a create that definitely did not happen (the bus away; garmd keeps no
// reconnect buffer) is an error and leaves the grant usable; a create whose
// answer was lost, and a create refused because the key holds a record, are
// resolved by reading the key back from the stream's leader — this call's
// record means spent by this call, another's means spent before, none means
// it never took effect, and the create is tried again — until ctx ends. An error other than replay.ErrSpent means the
// spend cannot be proved, and the caller refuses the call.
func (s *Spender) Spend(ctx context.Context, key, callID string) error {
	subject := "$KV." + s.bucket + "." + key
	unknown := false
	for {
		err := s.create(ctx, subject, callID)
		switch {
		case err == nil:
			return nil
		case wrongLastSequence(err):
			// The key holds a record. Whose is read, never assumed: across
			// a leader change the server can answer this call's own create,
			// applied once, with "wrong last sequence" when it meets it a
			// second time.
			return s.whose(ctx, subject, callID)
		case busoutcome.NotWritten(err) && !unknown:
			return fmt.Errorf("spending a grant in bucket %s: nothing was written: %w", s.bucket, err)
		}
		unknown = true
		owner, found, rerr := s.owner(ctx, subject)
		switch {
		case rerr == nil && found && owner == callID:
			return nil
		case rerr == nil && found:
			return replay.ErrSpent
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("spending a grant in bucket %s: whether it was spent is unknown when the call's deadline passed (last create: %v; last read-back: %v)", s.bucket, err, rerr)
		case <-time.After(retryPause):
		}
	}
}

// Spent reports whether key holds a record, read from the stream's leader.
func (s *Spender) Spent(ctx context.Context, key string) (bool, error) {
	_, found, err := s.owner(ctx, "$KV."+s.bucket+"."+key)
	return found, err
}

// whose resolves a key that holds a record: nil when the record is this
// call's, replay.ErrSpent when it is another's — or when it cannot be read
// before ctx ends, since a record is there and the call is refused either
// way.
func (s *Spender) whose(ctx context.Context, subject, callID string) error {
	for {
		owner, found, err := s.owner(ctx, subject)
		switch {
		case err == nil && found && owner == callID:
			return nil
		case err == nil && found:
			return replay.ErrSpent
		}
		select {
		case <-ctx.Done():
			return replay.ErrSpent
		case <-time.After(retryPause):
		}
	}
}

func (s *Spender) create(ctx context.Context, subject, callID string) error {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	msg := &nats.Msg{
		Subject: subject,
		Data:    []byte(callID),
		Header:  nats.Header{jetstream.ExpectedLastSubjSeqHeader: []string{"0"}},
	}
	_, err := s.js.PublishMsg(ctx, msg, jetstream.WithRetryAttempts(0))
	return err
}

func wrongLastSequence(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// msgGetResponse is the JetStream API's answer to a message get.
type msgGetResponse struct {
	Message *struct {
		Data []byte `json:"data"`
	} `json:"message"`
	Error *struct {
		Code    int    `json:"code"`
		ErrCode int    `json:"err_code"`
		Desc    string `json:"description"`
	} `json:"error"`
}

// errCodeNoMessage is the JetStream API's "no message found".
const errCodeNoMessage = 10037

// owner reads the record on subject from the bucket's stream leader (the
// message get API, never a direct get, which a stale follower may answer):
// the call that spent it, whether there is one, or why it cannot be read.
func (s *Spender) owner(ctx context.Context, subject string) (callID string, found bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	req, err := json.Marshal(map[string]string{"last_by_subj": subject})
	if err != nil {
		return "", false, err
	}
	reply, err := s.js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+s.bucket, req)
	if err != nil {
		return "", false, err
	}
	var res msgGetResponse
	if err := json.Unmarshal(reply.Data, &res); err != nil {
		return "", false, fmt.Errorf("the read-back answer does not parse: %w", err)
	}
	switch {
	case res.Error != nil && res.Error.ErrCode == errCodeNoMessage:
		return "", false, nil
	case res.Error != nil:
		return "", false, fmt.Errorf("the read-back was refused: %d %s", res.Error.ErrCode, res.Error.Desc)
	case res.Message == nil:
		return "", false, errors.New("the read-back answer holds no message")
	}
	return string(res.Message.Data), true, nil
}

var _ replay.Spender = (*Spender)(nil)
