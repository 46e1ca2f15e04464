package sealer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/nats-io/nats.go/jetstream"
)

// The head stream and its one subject. The subject is outside the
// ledger's subject space, so no ledger writer can publish a head.
const (
	HeadStream  = "GARM_LEDGER_HEADS"
	HeadSubject = "garm.v1.ledgerheads"
)

// HeadStreamConfig is the fenced stream of heads: nothing in it can be
// deleted, purged or rolled up, and nothing ages out.
func HeadStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        HeadStream,
		Description: "garm ledger signed tree heads (append-only)",
		Subjects:    []string{HeadSubject},
		Storage:     jetstream.FileStorage,
		Replicas:    replicas,
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardNew,
		DenyDelete:  true,
		DenyPurge:   true,
		AllowRollup: false,
	}
}

// CheckHeadStream refuses a head stream that is missing or not fenced,
// naming every problem.
func CheckHeadStream(ctx context.Context, js jetstream.JetStream) error {
	s, err := js.Stream(ctx, HeadStream)
	if err != nil {
		return fmt.Errorf("the head stream %s: %w", HeadStream, err)
	}
	cfg := s.CachedInfo().Config
	var problems []string
	if !cfg.DenyDelete {
		problems = append(problems, "allows deleting heads")
	}
	if !cfg.DenyPurge {
		problems = append(problems, "allows purging")
	}
	if cfg.AllowRollup {
		problems = append(problems, "allows roll-ups")
	}
	if cfg.MaxAge != 0 || cfg.MaxMsgs > 0 || cfg.MaxBytes > 0 || cfg.MaxMsgsPerSubject > 0 {
		problems = append(problems, "ages or limits heads out")
	}
	if len(problems) > 0 {
		return fmt.Errorf("the head stream %s is not fenced: it %s", HeadStream, strings.Join(problems, "; "))
	}
	return nil
}

// Latest is the last head on the head stream and its stream sequence;
// ok is false when there is none.
func Latest(ctx context.Context, js jetstream.JetStream) (h head.Signed, seq uint64, ok bool, err error) {
	s, err := js.Stream(ctx, HeadStream)
	if err != nil {
		return h, 0, false, fmt.Errorf("the head stream %s: %w", HeadStream, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, HeadSubject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return h, 0, false, nil
	}
	if err != nil {
		return h, 0, false, fmt.Errorf("the head stream %s: %w", HeadStream, err)
	}
	if err := json.Unmarshal(m.Data, &h); err != nil {
		return h, 0, false, fmt.Errorf("head message %d does not decode: %w", m.Sequence, err)
	}
	return h, m.Sequence, true, nil
}

// StoredHead is a head with its place on the head stream.
type StoredHead struct {
	Seq  uint64
	Head head.Signed
	// Err is why the message did not decode as a head.
	Err error
}

// ReadHeads is every message of the head stream, in order.
func ReadHeads(ctx context.Context, js jetstream.JetStream) ([]StoredHead, error) {
	s, err := js.Stream(ctx, HeadStream)
	if err != nil {
		return nil, fmt.Errorf("the head stream %s: %w", HeadStream, err)
	}
	last := s.CachedInfo().State.LastSeq
	var out []StoredHead
	for seq := s.CachedInfo().State.FirstSeq; seq != 0 && seq <= last; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			out = append(out, StoredHead{Seq: seq, Err: errors.New("the message is missing from the head stream")})
			continue
		}
		if err != nil {
			return nil, err
		}
		sh := StoredHead{Seq: seq}
		sh.Err = json.Unmarshal(m.Data, &sh.Head)
		out = append(out, sh)
	}
	return out, nil
}
