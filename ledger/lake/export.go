package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go/jetstream"
)

// Roll limits: a range is closed, and its objects written, when it holds
// RollRows rows or RollBytes bytes of rows, or (for the long-running
// exporter) when its first message has waited RollEvery. The defaults are
// the command's flags' defaults; MinRollEvery is the floor the command
// enforces, which bounds how many objects a quiet day makes (decision
// 0131).
const (
	DefaultRollRows  = 1_000_000
	DefaultRollBytes = 64 << 20
	DefaultRollEvery = 10 * time.Minute
	MinRollEvery     = time.Minute
	// DefaultDurable is the durable consumer's name.
	DefaultDurable = "garm-lake"
)

// Options configure an export.
type Options struct {
	RollRows  int
	RollBytes int
	RollEvery time.Duration
	// Durable names the long-running exporter's durable consumer.
	Durable string
	Logger  *slog.Logger

	// beforeAck, in tests, runs after a range is stored and before the
	// consumer is acknowledged; its error stops the export there.
	beforeAck func(Manifest) error
}

func (o *Options) defaults() {
	if o.RollRows <= 0 {
		o.RollRows = DefaultRollRows
	}
	if o.RollBytes <= 0 {
		o.RollBytes = DefaultRollBytes
	}
	if o.RollEvery <= 0 {
		o.RollEvery = DefaultRollEvery
	}
	if o.Durable == "" {
		o.Durable = DefaultDurable
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func (o *Options) full(p *pending) bool {
	return p.rows >= o.RollRows || p.bytes >= o.RollBytes
}

// Stats is what an export wrote.
type Stats struct {
	Ranges, Objects, Rows int
	// Last is the last stream message exported.
	Last uint64
}

// fetchBatch is how many messages one pull asks for.
const fetchBatch = 512

// ConsumerConfig is the durable consumer the exporter reads GARM_LEDGER
// with: acknowledging a message acknowledges every one before it, and a
// message is redelivered only once a range has waited twice RollEvery
// without being stored.
func ConsumerConfig(o Options) jetstream.ConsumerConfig {
	o.defaults()
	return jetstream.ConsumerConfig{
		Durable:       o.Durable,
		Description:   "garm ledger export: rows acknowledged once their range is in the lake",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       2*o.RollEvery + time.Minute,
		MaxAckPending: -1,
		MaxDeliver:    -1,
	}
}

// Export copies GARM_LEDGER to store until ctx ends, with a durable
// consumer: it acknowledges a message only once every object of the range
// holding it is stored, and resumes, after a restart or a crash, from the
// first message not acknowledged, rewriting a range it had begun under the
// same names with the same bytes. When ctx ends it stores the range it
// holds, then returns ctx's error.
func Export(ctx context.Context, js jetstream.JetStream, store Store, o Options) (Stats, error) {
	o.defaults()
	var st Stats
	rs, err := loadRanges(ctx, store, false)
	if err != nil {
		return st, err
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, wire.LedgerStream, ConsumerConfig(o))
	if err != nil {
		return st, fmt.Errorf("the durable consumer %s on %s: %w", o.Durable, wire.LedgerStream, err)
	}
	// Messages a stopped exporter was given and never acknowledged would
	// otherwise wait for AckWait: deliver again from the first one now.
	if _, err := js.ResetConsumer(ctx, wire.LedgerStream, o.Durable); err != nil {
		o.Logger.Warn("garm ledger export: the bus cannot reset a consumer; unacknowledged rows come back after the ack wait", "err", err)
	}
	var (
		p       pending
		started time.Time
		lastMsg jetstream.Msg
		done    uint64 // the last message taken into a range
	)
	flush := func(ctx context.Context) error {
		m, err := p.store(ctx, store, rs)
		if err != nil {
			return err
		}
		if o.beforeAck != nil {
			if err := o.beforeAck(m); err != nil {
				return err
			}
		}
		if err := lastMsg.DoubleAck(ctx); err != nil {
			return fmt.Errorf("stream messages %d–%d are in the lake, but acknowledging them failed (they will be rewritten, unchanged): %w", m.First, m.Last, err)
		}
		st.Ranges++
		st.Objects += len(m.Objects)
		st.Rows += m.Rows
		st.Last = m.Last
		o.Logger.Info("garm ledger export: stored a range", "first", m.First, "last", m.Last, "rows", m.Rows, "objects", len(m.Objects))
		p = pending{}
		return nil
	}
	take := func(batch jetstream.MessageBatch) error {
		// Returning mid-batch, wait out the pull request first: a message
		// redelivered to a request still open would reach no one until
		// the ack wait passes.
		defer func() {
			for range batch.Messages() {
			}
		}()
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return err
			}
			seq := meta.Sequence.Stream
			if seq <= done {
				continue // a redelivery of a message a range already holds
			}
			if p.empty() {
				started = time.Now()
				if plan, ok := rs.planned(seq); ok {
					p.plan = &plan
				}
			}
			if p.plan != nil && seq > p.plan.Last {
				return fmt.Errorf("stream messages %d–%d were planned as a range, but the stream now skips from %d to %d", p.plan.First, p.plan.Last, p.last, seq)
			}
			if err := p.add(seq, m.Data()); err != nil {
				return err
			}
			done, lastMsg = seq, m
			if (p.plan != nil && seq == p.plan.Last) || (p.plan == nil && o.full(&p)) {
				if err := flush(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for {
		if ctx.Err() != nil {
			if !p.empty() && p.plan == nil {
				fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				err := flush(fctx)
				cancel()
				if err != nil {
					return st, err
				}
			}
			return st, ctx.Err()
		}
		wait := time.Second
		if !p.empty() && p.plan == nil {
			wait = max(10*time.Millisecond, min(wait, time.Until(started.Add(o.RollEvery))))
		}
		batch, err := cons.Fetch(fetchBatch, jetstream.FetchMaxWait(wait))
		if err != nil {
			return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		if err := take(batch); err != nil {
			return st, err
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return st, fmt.Errorf("reading %s: %w", wire.LedgerStream, err)
		}
		if !p.empty() && p.plan == nil && time.Since(started) >= o.RollEvery {
			if err := flush(ctx); err != nil {
				return st, err
			}
		}
	}
}
