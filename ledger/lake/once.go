package lake

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Range is a one-shot export's stretch of GARM_LEDGER: stream messages
// From to To (0: the last the stream holds when the export starts), or, when
// Since is set, the messages the stream stored from Since to Until (zero:
// the last it holds).
type Range struct {
	From, To     uint64
	Since, Until time.Time
}

// idleEnd bounds the wait for a message the stream said it held.
const idleEnd = 5 * time.Second

// ExportRange copies one stretch of GARM_LEDGER to store and returns,
// without a durable consumer: ranges close on RollRows and RollBytes only,
// so the same stretch, exported again with the same limits, makes the same
// objects with the same bytes. It refuses to write a range that overlaps
// one the lake already holds with other bounds.
func ExportRange(ctx context.Context, js jetstream.JetStream, store Store, r Range, o Options) (Stats, error) {
	o.defaults()
	var st Stats
	s, err := js.Stream(ctx, wire.LedgerStream)
	if err != nil {
		return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
	}
	end := s.CachedInfo().State.LastSeq
	if r.To != 0 && r.Since.IsZero() {
		end = min(end, r.To)
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(1, r.From)}
	if !r.Since.IsZero() {
		cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &r.Since}
	}
	if end == 0 || end < cfg.OptStartSeq {
		return st, nil
	}
	rs, err := loadRanges(ctx, store, false)
	if err != nil {
		return st, err
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
	}
	var p pending
	flush := func() error {
		m, err := p.store(ctx, store, rs)
		if err != nil {
			return err
		}
		st.Ranges++
		st.Objects += len(m.Objects)
		st.Rows += m.Rows
		st.Last = m.Last
		p = pending{}
		return nil
	}
	for {
		batch, err := cons.Fetch(fetchBatch, jetstream.FetchMaxWait(idleEnd))
		if err != nil {
			return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return st, err
			}
			seq := meta.Sequence.Stream
			past := seq > end || (!r.Until.IsZero() && meta.Timestamp.After(r.Until))
			if !past {
				if err := p.add(seq, m.Data()); err != nil {
					return st, err
				}
			}
			if past || seq == end {
				var err error
				if !p.empty() {
					err = flush()
				}
				return st, err
			}
			if o.full(&p) {
				if err := flush(); err != nil {
					return st, err
				}
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		if got == 0 {
			var err error
			if !p.empty() {
				err = flush()
			}
			return st, err
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
}
