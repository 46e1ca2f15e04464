package quarantine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// Defaults of Options.
const (
	// DefaultInterval is how often a round runs.
	DefaultInterval = 10 * time.Second
	// DefaultPingWait is how long a round collects PING replies: services
	// answer in milliseconds on a healthy bus.
	DefaultPingWait = 500 * time.Millisecond
	// DefaultInfoTimeout bounds one INFO request.
	DefaultInfoTimeout = 2 * time.Second
	// DefaultRoundTimeout bounds a whole round, INFO requests included.
	DefaultRoundTimeout = 5 * time.Second
)

// infoConcurrency is how many INFO requests a round has in flight at once.
const infoConcurrency = 8

// Options tune a Reconciler; the zero value of each field is its default.
type Options struct {
	// Interval is the time between the rounds Run starts.
	Interval time.Duration
	// PingWait is how long a round collects replies to $SRV.PING.
	PingWait time.Duration
	// InfoTimeout bounds each $SRV.INFO request.
	InfoTimeout time.Duration
	// RoundTimeout bounds a whole round; a round cut short is incomplete.
	RoundTimeout time.Duration
	// Logger is told when a package is quarantined (warn) and lifted
	// (info); nil is silent.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	o.Interval = cmp.Or(max(o.Interval, 0), DefaultInterval)
	o.PingWait = cmp.Or(max(o.PingWait, 0), DefaultPingWait)
	o.InfoTimeout = cmp.Or(max(o.InfoTimeout, 0), DefaultInfoTimeout)
	o.RoundTimeout = cmp.Or(max(o.RoundTimeout, 0), DefaultRoundTimeout)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Reconciler keeps the verdicts current: Sweep runs one round, Run runs
// them every Interval and whenever the serving generation changes.
type Reconciler struct {
	nc      *nats.Conn
	o       Options
	current atomic.Pointer[Verdicts]
	kick    chan struct{}

	// mu serialises rounds: each one builds on the verdicts before it.
	mu sync.Mutex
	// swept is the generation the last round ran against.
	swept atomic.Pointer[catalogue.Generation]
}

// New is a Reconciler asking the bus through nc. It quarantines nothing
// until its first round.
func New(nc *nats.Conn, o Options) *Reconciler {
	r := &Reconciler{nc: nc, o: o.withDefaults(), kick: make(chan struct{}, 1)}
	r.current.Store(newVerdicts(nil, time.Time{}, false))
	return r
}

// Interval is the time between rounds, defaults applied.
func (r *Reconciler) Interval() time.Duration { return r.o.Interval }

// Current is the latest verdicts; never nil.
func (r *Reconciler) Current() *Verdicts { return r.current.Load() }

// Quarantined is Current().Quarantined: what the chain consults per call.
func (r *Reconciler) Quarantined(pkg string) (reason string, ok bool) {
	return r.current.Load().Quarantined(pkg)
}

// Reevaluate asks Run for a round as soon as it can, without waiting for
// it: what a catalogue swap calls.
func (r *Reconciler) Reevaluate() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run sweeps every Interval against current(), and at once when current()
// returns a generation the last round did not see or Reevaluate asks,
// until ctx is done.
func (r *Reconciler) Run(ctx context.Context, current func() *catalogue.Generation) {
	poll := min(r.o.Interval, time.Second)
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	last := time.Now()
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
			forced = true
		case <-ticker.C:
		}
		g := current()
		if g == nil {
			continue
		}
		if forced || g != r.swept.Load() || time.Since(last) >= r.o.Interval {
			r.Sweep(ctx, g)
			last = time.Now()
		}
	}
}

// instance is one running micro service instance, as PING named it.
type instance struct{ name, id string }

// round is what one sweep saw.
type round struct {
	found    map[string]Verdict
	complete bool
}

// Sweep runs one round against g and publishes its verdicts: a complete
// round's replace the last ones, an incomplete round's are added to them.
// A nil g changes nothing.
func (r *Reconciler) Sweep(ctx context.Context, g *catalogue.Generation) {
	if g == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, r.o.RoundTimeout)
	defer cancel()
	seen := r.observe(ctx, g)

	prev := r.current.Load()
	next := seen.found
	if !seen.complete {
		next = maps.Clone(seen.found)
		expected := expectedHashes(g)
		for pkg, v := range prev.byPackage {
			if _, known := expected[pkg]; !known {
				continue // not served any more: nothing to keep out
			}
			if _, ok := next[pkg]; !ok {
				next[pkg] = v
			}
		}
	}
	verdicts := newVerdicts(next, r.o.Now(), seen.complete)
	r.current.Store(verdicts)
	r.swept.Store(g)
	r.logChanges(prev, verdicts)
}

func (r *Reconciler) logChanges(prev, next *Verdicts) {
	for _, pkg := range next.Packages() {
		v := next.byPackage[pkg]
		if old, ok := prev.byPackage[pkg]; ok && old.Expected == v.Expected && old.Advertised == v.Advertised {
			continue
		}
		r.o.Logger.Warn("garmd: quarantined a package: a running tool service does not implement the catalogue's contract; its tools answer 503",
			"package", pkg, "expected_hash", v.Expected, "advertised_hash", v.Advertised,
			"service", v.Service, "instance", v.Instance)
	}
	for _, pkg := range prev.Packages() {
		if _, ok := next.byPackage[pkg]; ok {
			continue
		}
		v := prev.byPackage[pkg]
		r.o.Logger.Info("garmd: lifted a quarantine: every running service of the package matches the catalogue",
			"package", pkg, "expected_hash", v.Expected, "service", v.Service)
	}
}

// expectedHashes is each package's descriptor hash in g.
func expectedHashes(g *catalogue.Generation) map[string]string {
	out := map[string]string{}
	for _, t := range g.Tools {
		out[t.Package] = t.DescriptorHash
	}
	return out
}

// observe asks the bus which services run and what they advertise.
func (r *Reconciler) observe(ctx context.Context, g *catalogue.Generation) round {
	expected := expectedHashes(g)
	packageOf := make(map[string]string, len(g.Tools))
	for _, t := range g.Tools {
		packageOf[t.Subject] = t.Package
	}
	instances, complete := r.ping(ctx)

	infos := make([]*micro.Info, len(instances))
	var failed atomic.Bool
	var wg sync.WaitGroup
	sem := make(chan struct{}, infoConcurrency)
	for i, in := range instances {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			info, err := r.info(ctx, in)
			if err != nil {
				r.o.Logger.Debug("garmd: quarantine round: an INFO request failed; this round lifts nothing",
					"service", in.name, "instance", in.id, "error", err.Error())
				failed.Store(true)
				return
			}
			infos[i] = info
		})
	}
	wg.Wait()
	if failed.Load() || !r.nc.IsConnected() {
		complete = false
	}

	found := map[string]Verdict{}
	for i, info := range infos {
		if info == nil {
			continue
		}
		advertised := info.Metadata[wire.IdentityMetadata]
		for _, pkg := range packagesOf(info, packageOf) {
			if advertised == expected[pkg] {
				continue
			}
			if _, ok := found[pkg]; ok {
				continue // instances are sorted: the first is kept
			}
			found[pkg] = Verdict{Package: pkg, Expected: expected[pkg], Advertised: advertised,
				Service: info.Name, Instance: instances[i].id}
		}
	}
	return round{found: found, complete: complete}
}

// packagesOf is the packages whose tools the service's endpoints serve:
// an endpoint on a subject the catalogue routes belongs to that tool's
// package. Sorted.
func packagesOf(info *micro.Info, packageOf map[string]string) []string {
	var out []string
	for _, ep := range info.Endpoints {
		if pkg, ok := packageOf[ep.Subject]; ok && !slices.Contains(out, pkg) {
			out = append(out, pkg)
		}
	}
	slices.Sort(out)
	return out
}

// ping collects $SRV.PING replies for PingWait. It is complete when the
// request went out on a connected bus and ctx did not end it early.
func (r *Reconciler) ping(ctx context.Context) ([]instance, bool) {
	subject, err := micro.ControlSubject(micro.PingVerb, "", "")
	if err != nil {
		return nil, false
	}
	inbox := r.nc.NewInbox()
	sub, err := r.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, false
	}
	defer func() { _ = sub.Unsubscribe() }()
	if !r.nc.IsConnected() {
		return nil, false
	}
	if err := r.nc.PublishRequest(subject, inbox, nil); err != nil {
		return nil, false
	}
	wait, cancel := context.WithTimeout(ctx, r.o.PingWait)
	defer cancel()
	seen := map[instance]bool{}
	var out []instance
	for {
		msg, err := sub.NextMsgWithContext(wait)
		if err != nil {
			// The wait ending is the normal end, and the server saying no
			// service subscribes is a definite answer; the round's own end
			// is neither.
			complete := ctx.Err() == nil &&
				(errors.Is(err, context.DeadlineExceeded) || (errors.Is(err, nats.ErrNoResponders) && len(out) == 0))
			slices.SortFunc(out, func(a, b instance) int {
				return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.id, b.id))
			})
			return out, complete
		}
		var p micro.Ping
		if json.Unmarshal(msg.Data, &p) != nil || p.Type != micro.PingResponseType || p.Name == "" || p.ID == "" {
			continue // not a micro service: not a tool service either
		}
		in := instance{name: p.Name, id: p.ID}
		if !seen[in] {
			seen[in] = true
			out = append(out, in)
		}
	}
}

// info asks one instance what it serves and advertises.
func (r *Reconciler) info(ctx context.Context, in instance) (*micro.Info, error) {
	subject, err := micro.ControlSubject(micro.InfoVerb, in.name, in.id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.o.InfoTimeout)
	defer cancel()
	msg, err := r.nc.RequestWithContext(ctx, subject, nil)
	if err != nil {
		return nil, err
	}
	if code := msg.Header.Get(wire.ErrorCodeHeader); code != "" {
		return nil, fmt.Errorf("INFO answered %s %s", code, msg.Header.Get(wire.ErrorHeader))
	}
	var info micro.Info
	if err := json.Unmarshal(msg.Data, &info); err != nil {
		return nil, fmt.Errorf("INFO answer is not JSON: %w", err)
	}
	if info.Type != micro.InfoResponseType {
		return nil, fmt.Errorf("INFO answer has type %q", info.Type)
	}
	return &info, nil
}
