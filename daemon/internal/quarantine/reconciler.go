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
	// claims are the last round's claims on other packages' subjects,
	// each warned of once; guarded by mu.
	claims map[claim]bool
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
	found map[string]Verdict
	// complete is false when the round could not see every running
	// service at all: PING failed or the bus went away.
	complete bool
	// unsure are the packages one of whose own services did not answer
	// INFO: the round can add their quarantine but not lift it.
	unsure map[string]bool
	// claims are the endpoints services claimed for packages not theirs.
	claims map[claim]bool
}

// claim is an endpoint a service claimed on another package's subject.
type claim struct {
	service, instance, subject, pkg string
}

// Sweep runs one round against g and publishes its verdicts: a complete
// round's replace the last ones, except for the packages it was unsure
// of; an incomplete round's are added to them. A nil g changes nothing.
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
	if !seen.complete || len(seen.unsure) > 0 {
		next = maps.Clone(seen.found)
		expected := expectedHashes(g)
		for pkg, v := range prev.byPackage {
			if _, known := expected[pkg]; !known {
				continue // not served any more: nothing to keep out
			}
			if seen.complete && !seen.unsure[pkg] {
				continue // seen in full: the round decides it
			}
			if _, ok := next[pkg]; !ok {
				next[pkg] = v
			}
		}
	}
	verdicts := newVerdicts(next, r.o.Now(), seen.complete && len(seen.unsure) == 0)
	r.current.Store(verdicts)
	r.swept.Store(g)
	r.logChanges(prev, verdicts)
	r.logClaims(seen.claims)
}

// logClaims warns once of each claim a round saw that the one before did
// not: a service answering for another package's subject is a bus
// identity trying to act for another, or a misdeployment as grave.
func (r *Reconciler) logClaims(claims map[claim]bool) {
	for _, c := range slices.SortedFunc(maps.Keys(claims), compareClaims) {
		if r.claims[c] {
			continue
		}
		r.o.Logger.Warn("garmd: ignored a tool service claiming another package's tool: only a package's own services decide its quarantine; a bus identity may be trying to act for another",
			"service", c.service, "instance", c.instance, "subject", c.subject, "package", c.pkg)
	}
	r.claims = claims
}

func compareClaims(a, b claim) int {
	return cmp.Or(cmp.Compare(a.service, b.service), cmp.Compare(a.instance, b.instance),
		cmp.Compare(a.subject, b.subject), cmp.Compare(a.pkg, b.pkg))
}

func (r *Reconciler) logChanges(prev, next *Verdicts) {
	for _, pkg := range next.Packages() {
		v := next.byPackage[pkg]
		if old, ok := prev.byPackage[pkg]; ok && old.Expected == v.Expected && old.Advertised == v.Advertised {
			continue
		}
		r.o.Logger.Warn("garmd: quarantined a package: a running tool service does not implement the catalogue's contract; its tools answer 503",
			"package", pkg, "expected_hash", v.Expected, "advertised_hash", v.Advertised,
			"service", v.Service, "instance", v.Instance, "fix", v.Remedy())
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

// owners is who may speak for a package in g: each tool's subject is its
// package's, and each micro service name (wire.ServiceName of a proto
// service) is its package's — a set, since two packages' services can
// share a micro name.
type owners struct {
	bySubject map[string]string
	byService map[string][]string
}

func ownersOf(g *catalogue.Generation) owners {
	o := owners{bySubject: make(map[string]string, len(g.Tools)), byService: map[string][]string{}}
	for _, t := range g.Tools {
		o.bySubject[t.Subject] = t.Package
		name := wire.ServiceName(t.Service)
		if !slices.Contains(o.byService[name], t.Package) {
			o.byService[name] = append(o.byService[name], t.Package)
			slices.Sort(o.byService[name])
		}
	}
	return o
}

// observe asks the bus which services run and what they advertise.
func (r *Reconciler) observe(ctx context.Context, g *catalogue.Generation) round {
	expected := expectedHashes(g)
	own := ownersOf(g)
	instances, complete := r.ping(ctx)

	infos := make([]*micro.Info, len(instances))
	var mu sync.Mutex
	unsure := map[string]bool{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, infoConcurrency)
	for i, in := range instances {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			info, err := r.info(ctx, in)
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				// Nobody serves the instance PING named: it stopped since,
				// or the name was never one's (anyone may answer PING).
				// Its address is its name's, so nothing is hidden.
				return
			case err != nil:
				r.o.Logger.Debug("garmd: quarantine round: an INFO request failed; this round lifts nothing for the service's package",
					"service", in.name, "instance", in.id, "error", err.Error())
				mu.Lock()
				for _, pkg := range own.byService[in.name] {
					unsure[pkg] = true
				}
				mu.Unlock()
				return
			}
			infos[i] = info
		})
	}
	wg.Wait()
	if !r.nc.IsConnected() {
		complete = false
	}

	found := map[string]Verdict{}
	claims := map[claim]bool{}
	for i, info := range infos {
		if info == nil {
			continue
		}
		in := instances[i]
		if info.Name != in.name || info.ID != in.id {
			// Only in.name's services may answer on its INFO subject (the
			// bus grants it to them alone); an answer naming another is
			// not believed, and the package is not seen this round.
			r.o.Logger.Warn("garmd: ignored a tool service's INFO answer naming another service than the one asked",
				"service", in.name, "instance", in.id, "answered_service", info.Name, "answered_instance", info.ID)
			for _, pkg := range own.byService[in.name] {
				unsure[pkg] = true
			}
			continue
		}
		advertised := info.Metadata[wire.IdentityMetadata]
		for _, pkg := range packagesOf(info, in, own, claims) {
			if advertised == expected[pkg] {
				continue
			}
			if _, ok := found[pkg]; ok {
				continue // instances are sorted: the first is kept
			}
			found[pkg] = Verdict{Package: pkg, Expected: expected[pkg], Advertised: advertised,
				Service: info.Name, Instance: in.id}
		}
	}
	return round{found: found, complete: complete, unsure: unsure, claims: claims}
}

// packagesOf is the packages whose tools the instance serves and may speak
// for: an endpoint on a subject the catalogue routes counts for that
// tool's package only when the service's name is one of that package's
// services. Any other catalogue subject it claims is added to claims and
// counts for nothing. Sorted.
func packagesOf(info *micro.Info, in instance, own owners, claims map[claim]bool) []string {
	var out []string
	mine := own.byService[info.Name]
	for _, ep := range info.Endpoints {
		pkg, ok := own.bySubject[ep.Subject]
		switch {
		case !ok:
			// Not a tool of this catalogue: nothing garmd calls.
		case slices.Contains(mine, pkg):
			if !slices.Contains(out, pkg) {
				out = append(out, pkg)
			}
		default:
			claims[claim{service: info.Name, instance: in.id, subject: ep.Subject, pkg: pkg}] = true
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
