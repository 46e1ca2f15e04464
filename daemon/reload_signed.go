package garmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
	"github.com/garm-dev/garm/daemon/internal/catalogue/source"
)

// pollSigned is poll with --catalogue-keys (decision 0135): the state is the
// pair's, so an envelope that changes beside an unchanged artifact (a
// second signer's signature added) is read too. A pair whose artifact and
// envelope do not match is a publication caught between its two writes
// the first time it is seen ("not yet": logged quietly, not refused,
// polled again); the same pair seen again is refused like any other. A
// key set that cannot be read admits and refuses nothing: what is serving
// stays and the next poll asks again.
func (r *reloader) pollSigned(ctx context.Context) {
	state, err := r.pair.head(ctx)
	switch {
	case err != nil:
		r.unreachable(ctx, err)
		return
	case state == r.etag:
		return
	case r.refused != nil && state == r.refused.etag:
		r.restate()
		return
	}
	pair, state, err := r.pair.read(ctx, r.gate)
	var refusal *signed.Refusal
	switch {
	case errors.As(err, &refusal):
		if !r.transit.Settled(err) {
			r.logger.Info("garmd: the catalogue and its signatures do not match yet, as while one is being published; the serving generation stays",
				"source", r.src.String(), "check", refusal.Check, "artifact_digest", refusal.Digest)
			return
		}
		r.refuse(state, refusal.Digest, err)
		return
	case errors.As(err, new(*source.TooLargeError)):
		r.refuse(state, "", err)
		return
	case errors.Is(err, signed.ErrKeys):
		r.unusableKeys(ctx, err)
		return
	case err != nil:
		r.unreachable(ctx, err)
		return
	}
	r.transit.Settled(nil)

	serving := r.serving.Load()
	if pair.ArtifactDigest == serving.Digest {
		r.etag, r.refused = state, nil
		return
	}
	if err := r.gate.Judge(ctx, pair, serving.Signed); err != nil {
		r.refuseOrRetry(ctx, state, pair.ArtifactDigest, err)
		return
	}
	gen, err := catalogue.Reload(pair.Artifact, r.load, serving)
	if err != nil {
		r.refuse(state, pair.ArtifactDigest, err)
		return
	}
	gen.Signed = signed.Describe(pair)
	if err := catalogue.Mount(gen, r.steps); err != nil {
		r.refuse(state, pair.ArtifactDigest, fmt.Errorf("it does not mount: %w", err))
		return
	}
	// Recorded last, once nothing else can refuse it: a version is never
	// the highest served for a catalogue that was not served.
	if _, err := r.gate.Commit(ctx, pair, serving.Signed); err != nil {
		r.refuseOrRetry(ctx, state, pair.ArtifactDigest, err)
		return
	}
	r.swap(serving, gen, state)
}

// refuseOrRetry refuses a pair the gate refused; any other error is the
// bus's record of versions not answering (or forgotten), which is asked
// again on the next poll.
func (r *reloader) refuseOrRetry(ctx context.Context, state, digest string, err error) {
	if errors.As(err, new(*signed.Refusal)) {
		r.refuse(state, digest, err)
		return
	}
	r.standing(ctx, "garmd: the highest catalogue version served cannot be read or recorded on the bus; the serving generation stays",
		"bucket", versions.Bucket, "candidate_digest", digest, "err", err.Error())
}

// unusableKeys says that the catalogue key set cannot be used; what is
// serving stays.
func (r *reloader) unusableKeys(ctx context.Context, err error) {
	r.standing(ctx, "garmd: the catalogue key set cannot be used; the serving generation stays",
		"keys", r.gate.Keys().String(), "err", err.Error())
}

// standing logs a condition that admits and refuses nothing, at most once
// per poll interval, and not for a poll cut short by shutdown.
func (r *reloader) standing(ctx context.Context, msg string, attrs ...any) {
	if ctx.Err() != nil {
		return
	}
	now := r.now()
	if !r.warned.IsZero() && now.Sub(r.warned) < r.every {
		return
	}
	r.warned = now
	r.logger.Error(msg, append([]any{"source", r.src.String(), "serving_digest", r.serving.Load().Digest}, attrs...)...)
}
