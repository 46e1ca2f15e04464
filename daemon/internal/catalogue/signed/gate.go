package signed

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/garm-dev/garm/catalogue-builder/signature"
	"github.com/garm-dev/garm/daemon/internal/catalogue"
	"github.com/garm-dev/garm/daemon/internal/catalogue/signed/versions"
)

// The checks of this package's own, beside signature.Reason's, as a
// Refusal names them.
const (
	// CheckRollback is a version lower than the highest served.
	CheckRollback = "rollback"
	// CheckVersionReused is the highest version served, over other bytes.
	CheckVersionReused = "version_reused"
	// CheckOtherCatalogue is a statement naming another catalogue than the
	// one configured or serving.
	CheckOtherCatalogue = "other_catalogue"
)

// Refusal is a pair that may not be served: Check names the check it
// failed (signature.Reason's names, or this package's), Digest is the
// artifact's digest.
type Refusal struct {
	Check  string
	Digest string
	Err    error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Config is what a Gate needs; every field is required but RollbackTo.
type Config struct {
	Keys   *Keys
	Policy signature.Policy
	// Versions is the bus's record of the highest version served.
	Versions *versions.Store
	// Name, when set, is the only catalogue name served
	// (--catalogue-name); empty pins the name first served.
	Name string
	// RollbackTo is the one version lower than the highest served that may
	// be served (--catalogue-allow-rollback-to), once; 0 allows none.
	RollbackTo uint64
}

// Gate decides whether a catalogue's pair — artifact and envelope — may be
// served: Read verifies it against the key set and the signer policy,
// Judge compares its version with the highest served without writing, and
// Commit records it on the bus by compare-and-set, judging again on what
// the bus holds then. A Gate is used by one goroutine at a time.
type Gate struct {
	cfg Config
	// rolledBack is set once the allowed rollback has been written.
	rolledBack atomic.Bool
}

// New is a gate configured by cfg.
func New(cfg Config) *Gate { return &Gate{cfg: cfg} }

// UseVersions gives the gate the bus's record of the highest versions,
// once the bus is reached; Judge and Commit need it.
func (g *Gate) UseVersions(store *versions.Store) { g.cfg.Versions = store }

// Keys is the gate's key set.
func (g *Gate) Keys() *Keys { return g.cfg.Keys }

// Read loads the key set, checks that the policy can be met with it, and
// reads the pair (signature.ReadPair) and checks its signers against the
// policy. A refusal of the pair is a *Refusal wrapping ReadPair's error, so
// a signature.Transit can still judge it; a key set that cannot be used
// wraps ErrKeys; anything else is a failure to read.
func (g *Gate) Read(ctx context.Context, readEnvelope, readArtifact signature.Fetch) (*signature.Pair, error) {
	keys, err := g.cfg.Keys.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeys, err)
	}
	if err := g.cfg.Policy.Validate(keys); err != nil {
		return nil, fmt.Errorf("%w: the signer policy cannot be met with catalogue keys %s: %w", ErrKeys, g.cfg.Keys, err)
	}
	pair, err := signature.ReadPair(ctx, readEnvelope, readArtifact, keys)
	if err != nil {
		var pe *signature.PairError
		if !errors.As(err, &pe) {
			return nil, err
		}
		return nil, &Refusal{Check: signature.Reason(err), Digest: pe.ArtifactDigest, Err: err}
	}
	if err := g.cfg.Policy.Check(pair.Verified); err != nil {
		return nil, &Refusal{Check: signature.Reason(err), Digest: pair.ArtifactDigest, Err: err}
	}
	return pair, nil
}

// Judge says whether pair may replace serving (nil at start), reading the
// bus's record and writing nothing: a statement naming another catalogue
// than serving's, or a version the record does not allow, is a *Refusal.
func (g *Gate) Judge(ctx context.Context, pair *signature.Pair, serving *catalogue.Signed) error {
	if err := g.sameCatalogue(pair, serving); err != nil {
		return err
	}
	st := pair.Verified.Statement
	current, _, found, err := g.cfg.Versions.Highest(ctx, st.Catalogue)
	if err != nil {
		return err
	}
	_, _, err = g.decide(pair, nil)(current, found)
	return err
}

// Commit records pair's version as the highest served, by compare-and-set
// (versions.Store.Advance), judging it again on the record the bus holds
// at each attempt, and returns the record that stands. Call it after the
// catalogue loaded and mounted, just before it is served: a version is
// never recorded for a catalogue that was not served.
func (g *Gate) Commit(ctx context.Context, pair *signature.Pair, serving *catalogue.Signed) (versions.Record, error) {
	if err := g.sameCatalogue(pair, serving); err != nil {
		return versions.Record{}, err
	}
	var rolledBack bool
	rec, err := g.cfg.Versions.Advance(ctx, pair.Verified.Statement.Catalogue, g.decide(pair, &rolledBack))
	if err == nil && rolledBack {
		g.rolledBack.Store(true)
	}
	return rec, err
}

// decide is the version rule (decision 0136): a name never recorded, or a
// higher version, is written; the recorded version over the recorded bytes
// is served without a write; the recorded version over other bytes is
// refused; a lower version is refused unless it is exactly the one
// rollback allowed, not yet made by this process nor recorded as made,
// which is written with the version it lowered the record from.
// rolledBack, when not nil, is set when the answer is that rollback.
func (g *Gate) decide(pair *signature.Pair, rolledBack *bool) versions.Decide {
	st := pair.Verified.Statement
	return func(current versions.Record, found bool) (versions.Record, bool, error) {
		next := versions.Record{Version: st.Version, Digest: pair.ArtifactDigest, Signers: pair.Verified.SignerKeyIDs(), RolledBackTo: current.RolledBackTo}
		switch {
		case !found || st.Version > current.Version:
			return next, true, nil
		case st.Version == current.Version && pair.ArtifactDigest == current.Digest:
			return current, false, nil
		case st.Version == current.Version:
			return current, false, &Refusal{Check: CheckVersionReused, Digest: pair.ArtifactDigest, Err: fmt.Errorf(
				"catalogue %s version %d was already served as %s; a new catalogue is signed with a higher version", st.Catalogue, st.Version, current.Digest)}
		case st.Version == g.cfg.RollbackTo && !g.rolledBack.Load() && current.RolledBackTo != st.Version:
			next.RolledBackFrom, next.RolledBackTo = current.Version, st.Version
			if rolledBack != nil {
				*rolledBack = true
			}
			return next, true, nil
		}
		var hint string
		switch {
		case g.cfg.RollbackTo != st.Version:
			hint = fmt.Sprintf("; --catalogue-allow-rollback-to %d allows going back to it once", st.Version)
		default:
			hint = fmt.Sprintf("; the one rollback to version %d was made, so sign it again with a version above %d to serve it", st.Version, current.Version)
		}
		return current, false, &Refusal{Check: CheckRollback, Digest: pair.ArtifactDigest, Err: fmt.Errorf(
			"catalogue %s version %d is older than version %d, the highest served (%s)%s", st.Catalogue, st.Version, current.Version, current.Digest, hint)}
	}
}

// sameCatalogue refuses a statement naming another catalogue than the one
// configured or, without one, the one serving (decision 0132: versions are
// counted per name, so another name's higher version must not replace this
// one's).
func (g *Gate) sameCatalogue(pair *signature.Pair, serving *catalogue.Signed) error {
	name, want := pair.Verified.Statement.Catalogue, g.cfg.Name
	if want == "" && serving != nil {
		want = serving.Catalogue
	}
	if want == "" || want == name {
		return nil
	}
	return &Refusal{Check: CheckOtherCatalogue, Digest: pair.ArtifactDigest, Err: fmt.Errorf(
		"the signatures are for catalogue %s, and garmd serves catalogue %s", name, want)}
}

// Describe is what a generation carries of the pair it was read from.
func Describe(pair *signature.Pair) *catalogue.Signed {
	v := pair.Verified
	s := &catalogue.Signed{Catalogue: v.Statement.Catalogue, Version: v.Statement.Version, SignedAt: v.Statement.SignedAt}
	for _, k := range v.Signers {
		s.Signers = append(s.Signers, catalogue.Signer{KeyID: k.KeyID, Group: k.Group})
	}
	return s
}
