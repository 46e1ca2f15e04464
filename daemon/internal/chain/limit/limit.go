package limit

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// Counter is the port the step counts through: exact, fleet-wide totals.
// limit/jetstream implements it on JetStream counter streams.
type Counter interface {
	// Add adds delta to the counter at subject and returns its new total.
	Add(ctx context.Context, subject string, delta int64) (int64, error)
	// Time is the bus's clock now, as it stamps what it stores.
	Time(ctx context.Context) (time.Time, error)
}

// Config is what a Limiter runs with. Counter is required.
type Config struct {
	Counter Counter
	// Bound is how long one count may take before the call is refused
	// limit_unavailable; 0 is DefaultBound. Much shorter than a call's
	// deadline.
	Bound time.Duration
	// KeyCap is how many distinct keys one tenant may count per limit and
	// window; 0 is DefaultKeyCap.
	KeyCap int64
	// Replicas is how many garmd replicas serve: a soft limit's local
	// bucket, when the bus is away, is its count over Replicas. 0 is 1.
	Replicas int
	// Recalibrate is how often the bus's clock is read again; 0 is
	// DefaultRecalibrate.
	Recalibrate time.Duration
	// Now is the replica's clock; nil is time.Now.
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultBound       = 250 * time.Millisecond
	DefaultKeyCap      = 10000
	DefaultRecalibrate = 30 * time.Second
)

// Limiter is the step: it counts a call against its tool's limits and
// gives the counts back. Safe for concurrent use.
type Limiter struct {
	cfg Config
	// offset is the bus's clock minus the replica's, in nanoseconds;
	// calibratedAt is when it was last read (replica clock, Unix ns; 0:
	// never), calibrating is set while a reading is under way.
	offset, calibratedAt atomic.Int64
	calibrating          atomic.Bool

	mu sync.Mutex
	// known are the counter subjects this replica has counted in their
	// window: their key is already within the tenant's cap.
	known map[string]struct{}
	// soft are soft limits' local buckets, by counter subject: what the
	// bus last said and what this replica admitted on its own since
	// (docs/decisions/0128).
	soft map[string]bucket
}

// bucket is a soft limit's local bucket for one counter subject: seen is
// the highest total the bus returned to this replica's admissions (0: none
// yet), spent what this replica admitted while the bus was away.
type bucket struct{ seen, spent int64 }

// maxRemembered bounds known and soft: past it they are forgotten
// (docs/decisions/0126).
const maxRemembered = 1 << 16

const calibrationBound = 2 * time.Second

// New is a Limiter over cfg.
func New(cfg Config) *Limiter {
	if cfg.Bound <= 0 {
		cfg.Bound = DefaultBound
	}
	if cfg.KeyCap <= 0 {
		cfg.KeyCap = DefaultKeyCap
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Recalibrate <= 0 {
		cfg.Recalibrate = DefaultRecalibrate
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, known: map[string]struct{}{}, soft: map[string]bucket{}}
}

// Calibrate reads the bus's clock, which every window is counted by. It is
// off the call's path but its first time, so it takes up to
// calibrationBound, ctx permitting.
func (l *Limiter) Calibrate(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, max(l.cfg.Bound, calibrationBound))
	defer cancel()
	t0 := l.cfg.Now()
	bus, err := l.cfg.Counter.Time(ctx)
	if err != nil {
		return err
	}
	t1 := l.cfg.Now()
	mid := t0.Add(t1.Sub(t0) / 2)
	l.offset.Store(int64(bus.Sub(mid)))
	l.calibratedAt.Store(t1.UnixNano())
	return nil
}

// busNow is the bus's clock as this replica reckons it, reading it again
// in the background when the reading is old; ok is false when it was never
// read and cannot be now.
func (l *Limiter) busNow(ctx context.Context) (time.Time, bool) {
	now := l.cfg.Now()
	at := l.calibratedAt.Load()
	if at == 0 {
		if err := l.Calibrate(ctx); err != nil {
			return now, false
		}
		return l.cfg.Now().Add(time.Duration(l.offset.Load())), true
	}
	if now.UnixNano()-at > int64(l.cfg.Recalibrate) && l.calibrating.CompareAndSwap(false, true) {
		go func() {
			defer l.calibrating.Store(false)
			_ = l.Calibrate(context.Background())
		}()
	}
	return now.Add(time.Duration(l.offset.Load())), true
}

// Ticket is what a call was counted: given back by Release.
type Ticket struct {
	counts []counted
}

type counted struct {
	subject     string
	delta       int64
	concurrency bool
	bus         bool
}

// Counted reports whether t holds anything to give back.
func (t *Ticket) Counted() bool { return len(t.counts) > 0 }

// Admit counts the call against each of lims that applies to p, in order,
// into t. It returns nil, or the limit that refused the call (for the
// ledger's limit_id and limit_key) and a *deny.Denied rate_limited naming
// it (deny.RateLimit) or a *deny.Failed limit_unavailable; on either,
// whatever this call counted is given back first. A limit keyed on the
// agent does not apply to a call that is not delegated.
func (l *Limiter) Admit(ctx context.Context, lims []*Limit, p *call.Principal, t *Ticket) (*Limit, error) {
	var values [3]string
	var buf [sha256Size]byte
	for _, lim := range lims {
		vs := values[:0]
		for _, k := range lim.Key {
			switch k {
			case toolv1.Limit_KEY_PART_TENANT:
				vs = append(vs, p.Tenant)
			case toolv1.Limit_KEY_PART_SUBJECT:
				vs = append(vs, p.Subject)
			case toolv1.Limit_KEY_PART_AGENT:
				if len(p.Act) == 0 {
					continue
				}
				vs = append(vs, p.Act[len(p.Act)-1].Subject)
			}
		}
		if lim.AgentKeyed && len(p.Act) == 0 {
			continue
		}
		key := keyToken(buf[:], vs...)
		if err := l.admitOne(ctx, lim, p.Tenant, key, t); err != nil {
			l.Release(ctx, t, false)
			return lim, err
		}
	}
	return nil, nil
}

const sha256Size = 32

func (l *Limiter) admitOne(ctx context.Context, lim *Limit, tenant, key string, t *Ticket) error {
	now, ok := l.busNow(ctx)
	bounded, cancel := context.WithTimeout(ctx, l.cfg.Bound)
	defer cancel()
	if !ok {
		return l.away(lim, key, now, t, "the bus's clock could not be read")
	}
	idx := now.UnixNano() / int64(lim.Span)
	epoch := strconv.FormatInt(idx, 10)
	subject := lim.prefix + epoch + "." + key
	if !l.remembered(subject) {
		n, err := l.cfg.Counter.Add(bounded, lim.prefix+epoch+".cap."+keyToken(make([]byte, 0, sha256Size), tenant), 1)
		if err != nil {
			return l.away(lim, key, now, t, "the key cap could not be counted: "+err.Error())
		}
		if n > l.cfg.KeyCap {
			return refuse(lim, now, idx, "the tenant counts more distinct keys than the key cap in this window")
		}
		l.remember(subject)
	}
	total, err := l.cfg.Counter.Add(bounded, subject, int64(lim.Cost))
	if err != nil {
		return l.away(lim, key, now, t, "the counter could not be reached: "+err.Error())
	}
	t.counts = append(t.counts, counted{subject: subject, delta: int64(lim.Cost), concurrency: lim.Concurrency, bus: true})
	if lim.Soft {
		l.saw(subject, total)
	}
	if lim.Concurrency {
		prev, err := l.cfg.Counter.Add(bounded, lim.prefix+strconv.FormatInt(idx-1, 10)+"."+key, 0)
		if err != nil {
			return l.away(lim, key, now, t, "the previous lease could not be read: "+err.Error())
		}
		total += prev
	}
	if total > int64(lim.Count) {
		if !lim.Concurrency {
			// A rate's refused count stays: it is this window's, and the
			// next answers the same (docs/decisions/0125).
			t.counts = t.counts[:len(t.counts)-1]
		}
		return refuse(lim, now, idx, "the call would exceed the limit")
	}
	return nil
}

// away decides a call whose count could not be made: a hard limit refuses
// it; a soft one admits it on this replica's share of what the bus last
// said remained of the window: max(0, count − the last total seen) over
// the replicas, or count over the replicas (at least one call's cost) when
// this replica has seen no total for the window.
func (l *Limiter) away(lim *Limit, key string, now time.Time, t *Ticket, detail string) error {
	if !lim.Soft {
		return deny.Fail(deny.LimitUnavailable, deny.KindLimitUnavailable, "limit "+lim.ID+": "+detail)
	}
	idx := now.UnixNano() / int64(lim.Span)
	subject := lim.prefix + strconv.FormatInt(idx, 10) + "." + key
	replicas := int64(l.cfg.Replicas)
	l.mu.Lock()
	if len(l.soft) >= maxRemembered {
		clear(l.soft)
	}
	b := l.soft[subject]
	share := max(int64(lim.Count)/replicas, int64(lim.Cost))
	if b.seen > 0 {
		share = max(0, int64(lim.Count)-b.seen) / replicas
	}
	admit := b.spent+int64(lim.Cost) <= share
	if admit {
		b.spent += int64(lim.Cost)
		l.soft[subject] = b
	}
	l.mu.Unlock()
	if !admit {
		return refuse(lim, now, idx, "the replica's local share of a soft limit is spent while the bus is away: "+detail)
	}
	t.counts = append(t.counts, counted{subject: subject, delta: int64(lim.Cost), concurrency: lim.Concurrency})
	return nil
}

// saw records total, the bus's answer to an admission for a soft limit's
// subject. The highest answer is kept: two calls' answers may be recorded
// in another order than the bus gave them, and a give-back that lowered
// the total since only makes the share smaller than it could be, never
// larger.
func (l *Limiter) saw(subject string, total int64) {
	l.mu.Lock()
	if len(l.soft) >= maxRemembered {
		clear(l.soft)
	}
	b := l.soft[subject]
	b.seen = max(b.seen, total)
	l.soft[subject] = b
	l.mu.Unlock()
}

func refuse(lim *Limit, now time.Time, idx int64, detail string) error {
	retry := time.Second
	if !lim.Concurrency {
		retry = time.Unix(0, (idx+1)*int64(lim.Span)).Sub(now)
	}
	return deny.RateLimit(lim.ID, lim.Count, retry, "limit "+lim.ID+" keyed on "+lim.KeyName+": "+detail)
}

func (l *Limiter) remembered(subject string) bool {
	l.mu.Lock()
	_, ok := l.known[subject]
	l.mu.Unlock()
	return ok
}

func (l *Limiter) remember(subject string) {
	l.mu.Lock()
	if len(l.known) >= maxRemembered {
		clear(l.known)
	}
	l.known[subject] = struct{}{}
	l.mu.Unlock()
}

// Release gives back what t counted that is owed: every concurrency count,
// and a rate's when the call was not dispatched. It is bounded like a
// count; a give-back that fails leaves the count spent (closed, never
// open), and a concurrency count so left ends with its lease.
func (l *Limiter) Release(ctx context.Context, t *Ticket, dispatched bool) {
	if len(t.counts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Bound)
	defer cancel()
	for _, c := range t.counts {
		if dispatched && !c.concurrency {
			continue
		}
		if !c.bus {
			l.mu.Lock()
			if b, ok := l.soft[c.subject]; ok {
				b.spent -= c.delta
				l.soft[c.subject] = b
			}
			l.mu.Unlock()
			continue
		}
		_, _ = l.cfg.Counter.Add(ctx, c.subject, -c.delta)
	}
	t.counts = t.counts[:0]
}
