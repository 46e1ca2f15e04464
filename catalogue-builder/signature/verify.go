package signature

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// The ways a catalogue's signatures fail. Every error Parse, Verify,
// ReadPair and Policy.Check return wraps exactly one of them; Reason names
// it for a log line.
var (
	// ErrMalformed: the envelope is not one this package reads (Parse).
	ErrMalformed = errors.New("malformed signature envelope")
	// ErrUnsigned: there is no envelope, or it holds no signature.
	ErrUnsigned = errors.New("unsigned catalogue")
	// ErrUnknownKey: no signature is by a key of the key set.
	ErrUnknownKey = errors.New("signed by no known catalogue key")
	// ErrBadSignature: a signature by a known key does not verify.
	ErrBadSignature = errors.New("bad catalogue signature")
	// ErrDigestMismatch: the signatures are good but the statement names
	// another artifact than the one read.
	ErrDigestMismatch = errors.New("the signed digest is not the artifact's")
	// ErrTooFewSigners: the signatures are good but fewer than the policy
	// requires.
	ErrTooFewSigners = errors.New("too few catalogue signers")
	// ErrAlreadySigned: AddSignature was given a key that already signed.
	ErrAlreadySigned = errors.New("already signed by this key")
)

// Reason is a stable name for the check an error failed, for a log line or
// a metric label: "malformed", "unsigned", "unknown_key", "bad_signature",
// "digest_mismatch", "too_few_signers", or "other".
func Reason(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{
		{ErrMalformed, "malformed"},
		{ErrUnsigned, "unsigned"},
		{ErrUnknownKey, "unknown_key"},
		{ErrBadSignature, "bad_signature"},
		{ErrDigestMismatch, "digest_mismatch"},
		{ErrTooFewSigners, "too_few_signers"},
	} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "other"
}

// Verified is what a verified envelope vouches for.
type Verified struct {
	// Statement is the signed statement; its Digest is the artifact's.
	Statement Statement
	// Signers are the distinct known keys whose signatures verified, sorted
	// by key id. A key that signed twice is here once.
	Signers []Key
	// Unknown are key ids of signatures by keys outside the key set
	// (a key rotated out, say), sorted; they count for nothing.
	Unknown []string
}

// SignerKeyIDs lists the signers' key ids, for a log line.
func (v *Verified) SignerKeyIDs() []string {
	out := make([]string, len(v.Signers))
	for i, s := range v.Signers {
		out[i] = s.KeyID
	}
	return out
}

// Verify checks an envelope against the artifact digest a reader computed
// over the bytes it read (artifact.Digest) and the trusted keys.
//
// Each signature is checked against the key its keyid names, with that
// key's one algorithm: never another key, never another algorithm. A
// signature whose keyid is not in the set is set aside (Unknown), so an
// envelope signed by an old and a new key still verifies once the old key
// is rotated out; a signature by a known key that does not verify refuses
// the whole envelope (ErrBadSignature), because a known key's name on a bad
// signature is tampering, not rotation. A key that signed more than once
// is counted once; each of its signatures must still verify. Then, with at
// least one good signer, the statement's digest must be the artifact's
// (ErrDigestMismatch); the signatures are checked first so that a
// mismatch under good signatures reads as a pair caught mid-publication
// (docs/decisions/0133), while forged bytes read as forged.
func Verify(e *Envelope, artifactDigest string, keys *KeySet) (*Verified, error) {
	if e == nil || len(e.Signatures) == 0 {
		return nil, fmt.Errorf("%w: the envelope holds no signature", ErrUnsigned)
	}
	if keys == nil {
		return nil, errors.New("no catalogue key set")
	}
	pae := dsse.PAE(PayloadType, e.Payload)
	good := map[string]Key{}
	unknown := map[string]bool{}
	for i, s := range e.Signatures {
		k, ok := keys.keys[s.KeyID]
		if !ok {
			unknown[s.KeyID] = true
			continue
		}
		if !k.verify(pae, s.Sig) {
			return nil, fmt.Errorf("%w: signature %d by key %s (%s) does not verify", ErrBadSignature, i, k.KeyID, k.Alg)
		}
		good[k.KeyID] = *k
	}
	v := &Verified{Statement: e.Statement}
	for _, s := range good {
		v.Signers = append(v.Signers, s)
	}
	sort.Slice(v.Signers, func(i, j int) bool { return v.Signers[i].KeyID < v.Signers[j].KeyID })
	for kid := range unknown {
		v.Unknown = append(v.Unknown, kid)
	}
	sort.Strings(v.Unknown)
	if len(v.Signers) == 0 {
		return nil, fmt.Errorf("%w: key ids %s", ErrUnknownKey, quoteAll(v.Unknown))
	}
	if e.Statement.Digest != artifactDigest {
		return nil, fmt.Errorf("%w: the statement signs %s, the artifact read is %s", ErrDigestMismatch, e.Statement.Digest, clip(artifactDigest))
	}
	return v, nil
}

// verify checks one signature with the key's own algorithm only.
func (k *Key) verify(pae, sig []byte) bool {
	switch k.Alg {
	case AlgEdDSA:
		pub, ok := k.public.(ed25519.PublicKey)
		return ok && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, pae, sig)
	case AlgES256:
		pub, ok := k.public.(*ecdsa.PublicKey)
		if !ok {
			return false
		}
		sum := sha256.Sum256(pae)
		return ecdsa.VerifyASN1(pub, sum[:], sig)
	}
	return false
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = clip(s)
	}
	return strings.Join(q, ", ")
}

// Policy is how many distinct keys must have signed: at least MinSigners
// in all (0 means 1: Verify never accepts an envelope without a good
// signer), and at least MinPerGroup[g] from group g.
type Policy struct {
	MinSigners  int
	MinPerGroup map[string]int
}

// Check refuses a verified envelope whose signers fall short of the policy
// (ErrTooFewSigners), naming every shortfall.
func (p Policy) Check(v *Verified) error {
	var short []string
	if n := len(v.Signers); n < p.MinSigners {
		short = append(short, fmt.Sprintf("%d distinct signers, %d required", n, p.MinSigners))
	}
	per := map[string]int{}
	for _, s := range v.Signers {
		if s.Group != "" {
			per[s.Group]++
		}
	}
	for _, g := range sortedGroups(p.MinPerGroup) {
		if per[g] < p.MinPerGroup[g] {
			short = append(short, fmt.Sprintf("%d signers from group %s, %d required", per[g], g, p.MinPerGroup[g]))
		}
	}
	if len(short) > 0 {
		return fmt.Errorf("%w: %s", ErrTooFewSigners, strings.Join(short, "; "))
	}
	return nil
}

// Validate reports, all at once, what makes the policy unmeetable with
// these keys: a negative count, a group minimum below 1, MinSigners above
// the number of keys, or a group with fewer keys than its minimum. A
// daemon validating its configuration calls it at boot and on every key
// set it loads.
func (p Policy) Validate(keys *KeySet) error {
	var errs []error
	if p.MinSigners < 0 {
		errs = append(errs, fmt.Errorf("the minimum number of signers is %d", p.MinSigners))
	}
	if keys != nil && p.MinSigners > len(keys.keys) {
		errs = append(errs, fmt.Errorf("%d signers are required but the key set holds %d keys", p.MinSigners, len(keys.keys)))
	}
	members := map[string]int{}
	if keys != nil {
		for _, k := range keys.keys {
			members[k.Group]++
		}
	}
	for _, g := range sortedGroups(p.MinPerGroup) {
		n := p.MinPerGroup[g]
		switch {
		case !groupRE.MatchString(g):
			errs = append(errs, fmt.Errorf("the group %s is not 1 to 64 lowercase letters, digits, '_' or '-'", clip(g)))
		case n < 1:
			errs = append(errs, fmt.Errorf("group %s: a minimum of %d signers", g, n))
		case keys != nil && members[g] < n:
			errs = append(errs, fmt.Errorf("group %s: %d signers are required but the key set holds %d keys in it", g, n, members[g]))
		}
	}
	return errors.Join(errs...)
}

func sortedGroups(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for g := range m {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}
