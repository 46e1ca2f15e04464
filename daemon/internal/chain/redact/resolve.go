package redact

import (
	"bytes"

	"github.com/garm-dev/garm/daemon/internal/cache"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// Resolution is what one caller shape may not read of one message plan
// (design 7.7). One Resolution serves every call of that shape: it is shared,
// and nothing may modify it or the rules it points to.
type Resolution struct {
	// Denied are the rules the shape may not read, in plan order, with every
	// rule below a denied one left out: clearing (or transforming) the
	// denied field takes its whole subtree.
	Denied []*planv1.FieldRule
	// Audited are the audit_on_read rules the shape may read and that lie
	// below no denied rule, in plan order: the fields disclosed_count counts
	// when an answer carries them.
	Audited []*planv1.FieldRule
	// Plan is the ledger's redaction_plan: the content address of Denied
	// (see planAddress), empty when nothing is denied.
	Plan string
	// arms are Denied's on_deny, read once for every call of the shape.
	arms []arm
}

// Redactor resolves plans per caller shape and applies them to answers. It
// is safe for concurrent use; its cache is shared by every call.
type Redactor struct {
	cache   *cache.Map[shapeKey, *Resolution]
	hashKey []byte
}

// New is a Redactor that keeps at most cacheSize resolutions and keys the
// hash arm's HMAC with hashKey, which it copies. A cacheSize of zero or less
// caches nothing and resolves on every call; an empty hashKey makes every
// hash arm omit, since an unkeyed digest of a guessable value is the value.
func New(cacheSize int, hashKey []byte) *Redactor {
	return &Redactor{cache: cache.New[shapeKey, *Resolution](cacheSize), hashKey: bytes.Clone(hashKey)}
}

// Resolve is what shape may not read of plan. ruleBits[i] holds the
// compartments of plan's rule i, numbered by the generation that holds plan;
// they are taken to be fixed for a given plan pointer, which with shape is
// the cache key, so the same plan and shape give the same *Resolution for as
// long as it stays cached.
func (r *Redactor) Resolve(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *Resolution {
	key := shapeKey{plan: plan, shape: shape}
	if res, ok := r.cache.Get(key); ok {
		return res
	}
	return r.cache.Put(key, resolve(plan, ruleBits, shape))
}

// resolve is Resolve without the cache. Plans list parents before children
// (design 3.5), so a rule's denied ancestor is always met first.
func resolve(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *Resolution {
	res := &Resolution{}
	for i, rule := range plan.GetRules() {
		if fieldpath.Below(rule.GetNumbers(), res.Denied) {
			continue
		}
		if !fieldpath.Readable(shape, ruleBits, i, rule) {
			res.Denied = append(res.Denied, rule)
			res.arms = append(res.arms, armOf(rule.GetOnDeny()))
			continue
		}
		if rule.GetAuditOnRead() {
			res.Audited = append(res.Audited, rule)
		}
	}
	res.Plan = planAddress(res.Denied)
	return res
}
