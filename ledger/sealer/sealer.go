package sealer

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/garm-dev/garm/ledger/head"
	"github.com/garm-dev/garm/ledger/merkle"
	"github.com/garm-dev/garm/ledger/rows"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Defaults for the zero values of Options: a head at least every
// DefaultEveryRows rows or DefaultEvery, whichever comes first (issue 35).
const (
	DefaultEveryRows = 1000
	DefaultEvery     = 60 * time.Second
)

// fetchRows is how many stream messages one read asks for.
const fetchRows = 256

// maxIdle bounds one wait for stream messages, so a due head is never
// later than this.
const maxIdle = time.Second

// Options tune a sealer. Signer and Logger are required.
type Options struct {
	Signer    head.Signer
	Logger    *slog.Logger
	EveryRows int
	Every     time.Duration
	// Trusted are earlier keys whose last head the sealer may continue
	// after a key rotation; its own key is always trusted.
	Trusted head.Keys
	// Now is the clock heads are stamped with; time.Now when nil.
	Now func() time.Time
}

// Run seals GARM_LEDGER until ctx ends (and then returns ctx's error) or
// something fails: the stream unreadable, a row that does not decode, a
// head not published. Whoever runs it restarts it; it resumes from the
// last head.
func Run(ctx context.Context, js jetstream.JetStream, o Options) error {
	if o.Signer.Key == nil || o.Signer.KeyID == "" || o.Logger == nil {
		return errors.New("sealer: Options.Signer and Options.Logger are required")
	}
	if o.EveryRows <= 0 {
		o.EveryRows = DefaultEveryRows
	}
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := CheckHeadStream(ctx, js); err != nil {
		return err
	}
	s, err := resume(ctx, js, o)
	if err != nil {
		return err
	}
	o.Logger.Info("sealer resuming", slog.Uint64("size", s.tree.Size()), slog.Uint64("from_stream_seq", s.startSeq))
	cons, err := js.OrderedConsumer(ctx, wire.LedgerStream, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   s.startSeq,
	})
	if err != nil {
		return fmt.Errorf("sealer: reading %s: %w", wire.LedgerStream, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := min(maxIdle, time.Until(s.lastHeadAt.Add(o.Every)))
		if wait > 0 {
			batch, err := cons.Fetch(fetchRows, jetstream.FetchMaxWait(wait))
			if err != nil {
				return fmt.Errorf("sealer: reading %s: %w", wire.LedgerStream, err)
			}
			for m := range batch.Messages() {
				meta, err := m.Metadata()
				if err != nil {
					return err
				}
				if err := s.dec.Batch(meta.Sequence.Stream, m.Data(), func(r rows.Row) error { return s.add(ctx, r) }); err != nil {
					return err
				}
			}
			if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && ctx.Err() == nil {
				return fmt.Errorf("sealer: reading %s: %w", wire.LedgerStream, err)
			}
		}
		if s.pending > 0 && !time.Now().Before(s.lastHeadAt.Add(o.Every)) {
			if err := s.seal(ctx); err != nil {
				return err
			}
		} else if s.pending == 0 && !time.Now().Before(s.lastHeadAt.Add(o.Every)) {
			s.lastHeadAt = time.Now()
		}
	}
}

// state is a running sealer's tree and place.
type state struct {
	js   jetstream.JetStream
	o    Options
	tree *merkle.Tree
	dec  rows.Decoder
	// prev is the last head's hash; headSeq its head stream sequence.
	prev    merkle.Hash
	headSeq uint64
	// startSeq and skip are where reading resumes: the message holding
	// the last sealed row, and how many of its rows are sealed already.
	startSeq uint64
	skip     uint32
	// seq and offset place the last row appended.
	seq    uint64
	offset uint32
	// pending counts rows appended since the last head.
	pending    int
	lastHeadAt time.Time
}

func resume(ctx context.Context, js jetstream.JetStream, o Options) (*state, error) {
	s := &state{js: js, o: o, tree: &merkle.Tree{}, startSeq: 1, lastHeadAt: time.Now()}
	last, seq, ok, err := Latest(ctx, js)
	if err != nil || !ok {
		return s, err
	}
	trusted := head.Keys{o.Signer.KeyID: o.Signer.Key.Public().(ed25519.PublicKey)}
	for kid, pub := range o.Trusted {
		trusted[kid] = pub
	}
	if err := last.Verify(trusted); err != nil {
		return nil, fmt.Errorf("sealer: the last head (head message %d) is not one to continue: %w", seq, err)
	}
	if s.tree, err = last.ResumeTree(); err != nil {
		return nil, fmt.Errorf("sealer: resuming from head message %d: %w", seq, err)
	}
	s.prev, s.headSeq = last.Hash(), seq
	s.seq, s.offset = last.Seq, last.Offset
	if last.Size > 0 {
		s.startSeq, s.skip = last.Seq, last.Offset
	}
	return s, nil
}

// add appends r unless the last head covers it already, and seals when
// EveryRows rows are pending.
func (s *state) add(ctx context.Context, r rows.Row) error {
	if r.Seq < s.startSeq || (r.Seq == s.startSeq && r.Index < s.skip) {
		return nil
	}
	s.tree.Append(r.Leaf)
	s.seq, s.offset = r.Seq, r.Index+1
	s.pending++
	if s.pending >= s.o.EveryRows {
		return s.seal(ctx)
	}
	return nil
}

// seal signs and publishes the head of the tree as it stands, on the
// condition that the head stream still ends with the head it chains to.
func (s *state) seal(ctx context.Context) error {
	h := head.Head{
		Size: s.tree.Size(), Root: s.tree.Root(), Time: s.o.Now().UTC(), Prev: s.prev,
		Seq: s.seq, Offset: s.offset, KeyID: s.o.Signer.KeyID,
	}
	signed := head.Sign(h, s.o.Signer.Key, s.tree.Frontier())
	data, err := json.Marshal(signed)
	if err != nil {
		return err
	}
	ack, err := s.js.Publish(ctx, HeadSubject, data,
		jetstream.WithExpectStream(HeadStream),
		jetstream.WithExpectLastSequence(s.headSeq),
	)
	if err != nil {
		return fmt.Errorf("sealer: publishing the head of size %d: %w", h.Size, err)
	}
	s.prev, s.headSeq = h.Hash(), ack.Sequence
	s.pending, s.lastHeadAt = 0, time.Now()
	s.o.Logger.Debug("head sealed", slog.Uint64("size", h.Size), slog.String("root", h.Root.String()), slog.Uint64("head_seq", ack.Sequence))
	return nil
}
