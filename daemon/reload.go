package garmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
	"github.com/garm-dev/garm/daemon/internal/metrics"
	"github.com/garm-dev/garm/runtime/wire"
	"github.com/nats-io/nats.go"
)

// Bounds of the catalogue's refresh.
const (
	// headTimeout bounds one HEAD for the artifact's ETag.
	headTimeout = 10 * time.Second
	// fetchTimeout bounds one download of the artifact, at start and on
	// reload: long enough for an artifact at artifact.MaxSize.
	fetchTimeout = 2 * time.Minute
	// restateEvery is how often a refusal that still stands is logged
	// again: often enough that an operator reading today's log sees it,
	// rarely enough that it does not drown the log.
	restateEvery = time.Hour
	// hintGap is the least time between two polls a hint starts, so a
	// burst of announcements cannot turn into a burst of requests to the
	// store.
	hintGap = time.Second
)

// readCatalogue loads the catalogue at location — a file or an s3:// URL —
// the way garmd does at start, without mounting it. For s3:// it returns
// the ETag the bytes came with, which the reloader starts from.
func readCatalogue(ctx context.Context, location string, o catalogue.Options) (*catalogue.Generation, string, error) {
	if !source.IsS3(location) {
		gen, err := catalogue.LoadFile(location, o)
		return gen, "", err
	}
	src, err := source.Open(ctx, location)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	data, etag, err := src.Fetch(ctx)
	if err != nil {
		return nil, "", err
	}
	gen, err := catalogue.Load(data, o)
	return gen, etag, err
}

// refreshes says how the catalogue is refreshed, for the startup report.
func refreshes(cfg Config) string {
	switch {
	case !source.IsS3(cfg.Catalogue) && cfg.CataloguePoll > 0:
		return "read once from a file at start; restart garmd to serve another catalogue (--catalogue-poll applies to s3:// only and is ignored)"
	case !source.IsS3(cfg.Catalogue):
		return "read once from a file at start; restart garmd to serve another catalogue"
	case cfg.CataloguePoll <= 0:
		return fmt.Sprintf("read once from %s at start; --catalogue-poll is 0, so restart garmd to serve another catalogue", cfg.Catalogue)
	}
	return fmt.Sprintf("polled every %s at %s (ETag), and on %s", cfg.CataloguePoll, cfg.Catalogue, wire.CataloguePublishedSubject)
}

// reloader keeps the serving generation in step with the artifact at an
// s3:// URL. Every poll asks the store for the artifact's ETag; a changed
// ETag fetches the bytes once, and their digest decides whether they are a
// new catalogue. A new catalogue is loaded and mounted on the side — every
// load check, the mount allowlist (grant ceilings against the spent
// bucket's TTL included) and the compiled validator — and only then swapped
// in, whole, so a call in flight keeps the generation it pinned. A catalogue that does not
// load or mount is refused and the serving generation stays: a refusal
// never withdraws what is served, and neither does a store that cannot be
// reached.
//
// Its state is owned by the one goroutine that runs it (run, or a test
// calling poll); only hint is called from elsewhere.
type reloader struct {
	src     source.Source
	serving *catalogue.Serving
	load    catalogue.Options
	steps   catalogue.Steps
	// onSwap is called with each generation swapped in, after the swap.
	onSwap []func(*catalogue.Generation)
	logger *slog.Logger
	// every is the poll interval; now is the clock. Both are fields so a
	// test can drive the reloader without waiting.
	every time.Duration
	now   func() time.Time
	// hints holds at most one pending hint: a burst coalesces into one poll.
	hints chan struct{}

	// etag is the ETag of the bytes serving, or of bytes with the same
	// digest: while the store reports it, there is nothing to do.
	etag string
	// refused is the last artifact refused, while the store still holds it.
	refused *refusal
	// warned is when the store was last reported unreachable.
	warned time.Time
	// polled is when the last poll began.
	polled time.Time
	// ops counts each reload's result; nil counts nothing.
	ops *metrics.Operations

	// With --catalogue-keys (reload_signed.go): gate checks each pair,
	// pair is the artifact and its envelope, and etag and refused.etag are
	// the pair's state (pairState); transit tells a publication caught
	// between its writes from a pair that stays broken.
	gate    *signed.Gate
	pair    pairSources
	transit signature.Transit
}

// refusal is an artifact that did not load or mount, remembered so that it
// is not fetched again while the store holds it, and stated at most every
// restateEvery.
type refusal struct {
	etag, digest string
	reason       error
	stated       time.Time
}

func newReloader(src source.Source, serving *catalogue.Serving, etag string, o catalogue.Options, steps catalogue.Steps, every time.Duration, logger *slog.Logger) *reloader {
	return &reloader{
		src: src, serving: serving, etag: etag, load: o, steps: steps,
		logger: logger, every: every, now: time.Now, hints: make(chan struct{}, 1),
	}
}

// hint asks for a poll now. It never blocks: a hint already pending
// covers this one.
func (r *reloader) hint() {
	select {
	case r.hints <- struct{}{}:
	default:
	}
}

// run polls every r.every, and on each hint, until ctx is done.
func (r *reloader) run(ctx context.Context) {
	ticker := time.NewTicker(r.every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-r.hints:
			if wait := hintGap - r.now().Sub(r.polled); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}
		r.poll(ctx)
	}
}

// poll asks the store once whether the artifact changed, and acts on it.
func (r *reloader) poll(ctx context.Context) {
	r.polled = r.now()
	if r.gate != nil {
		r.pollSigned(ctx)
		return
	}
	headCtx, cancel := context.WithTimeout(ctx, headTimeout)
	etag, err := r.src.Head(headCtx)
	cancel()
	switch {
	case err != nil:
		r.unreachable(ctx, err)
		return
	case etag == r.etag:
		return
	case r.refused != nil && etag == r.refused.etag:
		r.restate()
		return
	}

	fetchCtx, cancel := context.WithTimeout(ctx, fetchTimeout)
	data, fetched, err := r.src.Fetch(fetchCtx)
	cancel()
	if tooLarge := (*source.TooLargeError)(nil); errors.As(err, &tooLarge) {
		r.refuse(etag, "", err)
		return
	}
	if err != nil {
		r.unreachable(ctx, err)
		return
	}
	r.consider(data, fetched)
}

// consider decides what fetched bytes are: the digest decides, not the
// ETag, since a store may give the same bytes a new ETag.
func (r *reloader) consider(data []byte, etag string) {
	digest := artifact.Digest(data)
	serving := r.serving.Load()
	switch {
	case digest == serving.Digest:
		r.etag, r.refused = etag, nil
		return
	case r.refused != nil && digest == r.refused.digest:
		r.refused.etag = etag
		r.restate()
		return
	}
	// What serving was built from, where the digests prove it unchanged,
	// is reused; serving is the only cache, so a refused candidate leaves
	// nothing behind.
	gen, err := catalogue.Reload(data, r.load, serving)
	if err != nil {
		r.refuse(etag, digest, err)
		return
	}
	if err := catalogue.Mount(gen, r.steps); err != nil {
		r.refuse(etag, digest, fmt.Errorf("it does not mount: %w", err))
		return
	}
	r.swap(serving, gen, etag)
}

// swap serves gen in place of serving, whose state was etag.
func (r *reloader) swap(serving, gen *catalogue.Generation, etag string) {
	r.serving.Store(gen)
	r.etag, r.refused = etag, nil
	r.count(metrics.ReloadSwapped)
	attrs := []any{"source", r.src.String(), "old_digest", serving.Digest, "new_digest", gen.Digest, "producer", gen.Producer, "tools", len(gen.Tools)}
	if s := gen.Signed; s != nil {
		attrs = append(attrs, "catalogue", s.Catalogue, "version", s.Version, "signers", signers(s))
	}
	r.logger.Info("garmd: catalogue reloaded", attrs...)
	for _, f := range r.onSwap {
		f(gen)
	}
}

func (r *reloader) refuse(etag, digest string, err error) {
	r.refused = &refusal{etag: etag, digest: digest, reason: err}
	r.count(metrics.ReloadRefused)
	r.restate()
}

func (r *reloader) count(result metrics.ReloadResult) {
	if r.ops != nil {
		r.ops.CountReload(result)
	}
}

// restate logs the standing refusal, unless it was stated within
// restateEvery.
func (r *reloader) restate() {
	f := r.refused
	now := r.now()
	if !f.stated.IsZero() && now.Sub(f.stated) < restateEvery {
		return
	}
	f.stated = now
	refused := f.digest
	if refused == "" {
		refused = "(not computed)"
	}
	attrs := []any{"source", r.src.String(), "serving_digest", r.serving.Load().Digest, "refused_digest", refused, "etag", f.etag}
	if ref := (*signed.Refusal)(nil); errors.As(f.reason, &ref) {
		attrs = append(attrs, "check", ref.Check)
	}
	r.logger.Error("garmd: catalogue refused; the serving generation stays", append(attrs, "reason", f.reason.Error())...)
}

// unreachable warns that the store did not answer, at most once per poll
// interval; what is serving stays. A poll cut short by shutdown says
// nothing.
func (r *reloader) unreachable(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	r.count(metrics.ReloadUnreachable)
	now := r.now()
	if !r.warned.IsZero() && now.Sub(r.warned) < r.every {
		return
	}
	r.warned = now
	r.logger.Warn("garmd: the catalogue's store cannot be reached; the serving generation stays",
		"source", r.src.String(), "serving_digest", r.serving.Load().Digest, "err", err.Error())
}

// openReloader prepares the reloader when the catalogue is s3:// and
// --catalogue-poll is positive, starting from the ETag the serving bytes
// came with, and subscribes to wire.CataloguePublishedSubject: a message
// there is a hint to poll now, never a source — its payload is not read,
// the store is the only place a catalogue comes from. Nothing polls until
// Run.
func (d *Daemon) openReloader(ctx context.Context, etag string) error {
	if !source.IsS3(d.cfg.Catalogue) || d.cfg.CataloguePoll <= 0 {
		return nil
	}
	src, err := source.Open(ctx, d.cfg.Catalogue)
	if err != nil {
		return err
	}
	r := newReloader(src, d.serving, etag, catalogue.Options{MaxTools: d.cfg.MaxTools}, d.opt.steps, d.cfg.CataloguePoll, d.logger)
	r.ops = &d.ops
	if d.gate != nil {
		if r.pair, err = openPair(ctx, d.cfg.Catalogue); err != nil {
			return err
		}
		r.gate = d.gate
	}
	if d.hints, err = d.nc.Subscribe(wire.CataloguePublishedSubject, func(*nats.Msg) { r.hint() }); err != nil {
		return fmt.Errorf("subscribing to %s: %w", wire.CataloguePublishedSubject, err)
	}
	d.reload = r
	return nil
}

// runReloader starts polling, when there is a reloader, and returns what
// stops it and waits until it has stopped. The hooks are read here, so
// whatever New registered in d.onSwap is called on every swap.
func (d *Daemon) runReloader(ctx context.Context) (stop func()) {
	r := d.reload
	if r == nil {
		return func() {}
	}
	r.onSwap = append([]func(*catalogue.Generation){
		func(g *catalogue.Generation) { d.metrics.SetCatalogue(g.Digest, g.Producer) },
		d.recordChecked,
	}, d.onSwap...)
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(ctx)
	}()
	return func() {
		_ = d.hints.Unsubscribe()
		cancel()
		<-done
	}
}
