// Package jetstream counts limits on JetStream counter streams (streams
// that allow message counters: each publish with a Nats-Incr header
// returns the subject's new total, exactly, in one round trip). It
// implements limit.Counter, creates and checks the counter streams
// (limit.Streams), and reads the bus's clock back from a stored counter.
//
// Deliberately not here: which subject a call counts on, and what a total
// decides (package limit's).
package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/garm-dev/garm/daemon/internal/chain/limit"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// incrHeader is the header a counter publish carries its increment in.
const incrHeader = "Nats-Incr"

// Counter is limit.Counter over js.
type Counter struct {
	js jetstream.JetStream
}

var _ limit.Counter = (*Counter)(nil)

// New is a Counter over js.
func New(js jetstream.JetStream) *Counter { return &Counter{js: js} }

// Add adds delta to the counter at subject and returns its new total.
func (c *Counter) Add(ctx context.Context, subject string, delta int64) (int64, error) {
	msg := &nats.Msg{Subject: subject, Header: nats.Header{incrHeader: []string{strconv.FormatInt(delta, 10)}}}
	ack, err := c.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, err
	}
	return total(ack.Value)
}

func total(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		var b big.Int
		if _, ok := b.SetString(v, 10); ok {
			return 0, fmt.Errorf("counter total %s does not fit", v)
		}
		return 0, fmt.Errorf("counter answered no total (%q)", v)
	}
	return n, nil
}

// Time adds 0 to the clock counter and reads back when the bus stored it.
func (c *Counter) Time(ctx context.Context) (time.Time, error) {
	if _, err := c.Add(ctx, limit.ClockSubject, 0); err != nil {
		return time.Time{}, err
	}
	s, err := c.js.Stream(ctx, clockStream)
	if err != nil {
		return time.Time{}, err
	}
	m, err := s.GetLastMsgForSubject(ctx, limit.ClockSubject)
	if err != nil {
		return time.Time{}, err
	}
	return m.Time, nil
}

// clockStream is the stream ClockSubject lives in.
var clockStream = limit.Streams()[0].Name

// StreamConfig is the configuration garmd's setup and garm bus init create
// s with, replicas copies.
func StreamConfig(s limit.Stream, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              s.Name,
		Description:       "garm's limit counters (issue 34)",
		Subjects:          []string{s.Subjects},
		Retention:         jetstream.LimitsPolicy,
		Discard:           jetstream.DiscardOld,
		MaxAge:            s.MaxAge,
		MaxMsgsPerSubject: 1,
		AllowMsgCounter:   true,
		DenyDelete:        true,
		DenyPurge:         true,
		Replicas:          replicas,
		Storage:           jetstream.FileStorage,
	}
}

// Create creates every counter stream that does not exist, with replicas
// copies, and checks those that do.
func Create(ctx context.Context, js jetstream.JetStream, replicas int) error {
	var errs []error
	for _, s := range limit.Streams() {
		if _, err := js.CreateStream(ctx, StreamConfig(s, replicas)); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			errs = append(errs, fmt.Errorf("stream %s: %w", s.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return Check(ctx, js)
}

// Check confirms every counter stream exists as garmd needs it: counters
// allowed, one message per subject, windows that expire and no sooner than
// they end, no delete or purge by a client.
func Check(ctx context.Context, js jetstream.JetStream) error {
	var errs []error
	for _, s := range limit.Streams() {
		st, err := js.Stream(ctx, s.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("stream %s: %w", s.Name, err))
			continue
		}
		cfg := st.CachedInfo().Config
		switch {
		case !cfg.AllowMsgCounter:
			errs = append(errs, fmt.Errorf("stream %s does not allow message counters", s.Name))
		case cfg.MaxMsgsPerSubject != 1:
			errs = append(errs, fmt.Errorf("stream %s keeps %d messages per subject, not 1", s.Name, cfg.MaxMsgsPerSubject))
		case cfg.MaxAge < s.MaxAge/2 || cfg.MaxAge == 0:
			errs = append(errs, fmt.Errorf("stream %s keeps counters for %s; they must outlive their window and expire (want %s)", s.Name, cfg.MaxAge, s.MaxAge))
		case !cfg.DenyDelete || !cfg.DenyPurge:
			errs = append(errs, fmt.Errorf("stream %s is not fenced: it must deny delete and purge", s.Name))
		case len(cfg.Subjects) != 1 || cfg.Subjects[0] != s.Subjects:
			errs = append(errs, fmt.Errorf("stream %s takes %v, not %s", s.Name, cfg.Subjects, s.Subjects))
		}
	}
	return errors.Join(errs...)
}
