package diff

import (
	"slices"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// tool reports what changed in the declaration of a tool both catalogues
// hold: the gates of visibility (verb, clearance, compartments, sets), then
// approval, audit and how the tool is reached.
func (r *report) tool(old, new *compile.Tool) {
	fqn, was, is := new.FQN, old.Policy, new.Policy
	if was.GetVerb() != is.GetVerb() {
		// Verbs are a set, not a ladder (design 3.1): a caller holding the
		// new verb need not hold the old one, so neither direction holds.
		r.about(Unclear, fqn, "verb changed to %s, was %s", name(is.GetVerb()), name(was.GetVerb()))
	}
	if d, ok := strength(requirement(was.GetMinClearance()), requirement(is.GetMinClearance())); ok {
		r.about(d, fqn, "min clearance %s to %s, was %s", moved(d), name(is.GetMinClearance()), name(was.GetMinClearance()))
	}
	removed, added := setDiff(was.GetCompartments(), is.GetCompartments())
	for _, c := range removed {
		r.about(Widening, fqn, "no longer needs compartment %s", c)
	}
	for _, c := range added {
		r.about(Narrowing, fqn, "now needs compartment %s", c)
	}
	// A scoped caller reaches a tool through a set they share with it
	// (design 3.2): a set more reaches more callers.
	removed, added = setDiff(was.GetSets(), is.GetSets())
	for _, s := range added {
		r.about(Widening, fqn, "added to tool set %s", s)
	}
	for _, s := range removed {
		r.about(Narrowing, fqn, "removed from tool set %s", s)
	}
	r.approval(fqn, was.GetApproval(), is.GetApproval())
	r.audit(fqn, was.GetAudit(), is.GetAudit())
	r.instance(fqn, was.GetInstance(), is.GetInstance())
	if a, b := audiences(was.GetAudience()), audiences(is.GetAudience()); !slices.Equal(a, b) {
		// Audience is a listing rule, not a gate (design 3.1).
		r.about(Unclear, fqn, "audience changed to %s, was %s", strings.Join(b, ", "), strings.Join(a, ", "))
	}
	if old.Method != new.Method {
		r.about(Unclear, fqn, "route changed to %s, was %s", new.Method, old.Method)
	}
}

// approval reports a change of mode, or, when the tool needs a grant on
// both sides, a change of what the grant must satisfy. Terms under another
// mode bind nothing, so a mode change is reported alone.
func (r *report) approval(fqn string, was, is *toolv1.ToolPolicy_Approval) {
	before, knownBefore := approvalStrength(was.GetMode())
	after, knownAfter := approvalStrength(is.GetMode())
	switch {
	case was.GetMode() == is.GetMode():
	case !knownBefore || !knownAfter:
		r.about(Unclear, fqn, "approval changed to %s, was %s", name(is.GetMode()), name(was.GetMode()))
		return
	default:
		if d, ok := strength(before, after); ok {
			r.about(d, fqn, "approval %s to %s, was %s", strengthened(d), name(is.GetMode()), name(was.GetMode()))
		}
		return
	}
	if is.GetMode() != toolv1.ToolPolicy_Approval_MODE_GRANT {
		return
	}
	if d, ok := strength(requirement(was.GetApproverMinClearance()), requirement(is.GetApproverMinClearance())); ok {
		r.about(d, fqn, "approver clearance %s to %s, was %s", moved(d), name(is.GetApproverMinClearance()), name(was.GetApproverMinClearance()))
	}
	removed, added := setDiff(was.GetApproverCompartments(), is.GetApproverCompartments())
	for _, c := range removed {
		r.about(Widening, fqn, "approvers no longer need compartment %s", c)
	}
	for _, c := range added {
		r.about(Narrowing, fqn, "approvers now need compartment %s", c)
	}
	// An older grant is an approval given further from the call it
	// approves: a longer age admits more.
	switch oldAge, newAge := was.GetMaxGrantAgeSeconds(), is.GetMaxGrantAgeSeconds(); {
	case newAge > oldAge:
		r.about(Widening, fqn, "max grant age raised to %ds, was %ds", newAge, oldAge)
	case newAge < oldAge:
		r.about(Narrowing, fqn, "max grant age lowered to %ds, was %ds", newAge, oldAge)
	}
	// A material field is one the approver saw and the grant binds; without
	// it the caller may change that value after approval.
	removed, added = setDiff(was.GetMaterialFields(), is.GetMaterialFields())
	for _, f := range removed {
		r.about(Widening, fqn, "grants no longer bind material field %s", f)
	}
	for _, f := range added {
		r.about(Narrowing, fqn, "grants now bind material field %s", f)
	}
	// Four eyes: without distinct_approver, the caller or an agent acting
	// for it may approve its own call.
	switch before, after := was.GetDistinctApprover(), is.GetDistinctApprover(); {
	case before && !after:
		r.about(Widening, fqn, "distinct_approver turned off: the caller or an actor of its chain may approve its own call")
	case !before && after:
		r.about(Narrowing, fqn, "distinct_approver turned on: the approver must be neither the caller nor an actor of its chain")
	}
}

// audit reports a change of level, or, when the tool is audited on both
// sides, a change of its terms; retention and fail_closed qualify only the
// audit stream's rows, so a level change is reported alone.
func (r *report) audit(fqn string, was, is *toolv1.ToolPolicy_Audit) {
	before, knownBefore := auditStrength(was.GetLevel())
	after, knownAfter := auditStrength(is.GetLevel())
	switch {
	case !knownBefore || !knownAfter:
		if was.GetLevel() != is.GetLevel() {
			r.about(Unclear, fqn, "audit changed to %s, was %s", name(is.GetLevel()), name(was.GetLevel()))
		}
		return
	case before != after:
		d, _ := strength(before, after)
		r.about(d, fqn, "audit %s to %s, was %s", strengthened(d), name(is.GetLevel()), name(was.GetLevel()))
		return
	case is.GetLevel() != toolv1.ToolPolicy_Audit_LEVEL_AUDIT:
		return
	}
	switch {
	case was.GetFailClosed() && !is.GetFailClosed():
		r.about(Widening, fqn, "audit no longer fails closed")
	case !was.GetFailClosed() && is.GetFailClosed():
		r.about(Narrowing, fqn, "audit now fails closed")
	}
	switch oldDays, newDays := was.GetRetainDays(), is.GetRetainDays(); {
	case newDays < oldDays:
		r.about(Widening, fqn, "audit retention lowered to %d days, was %d", newDays, oldDays)
	case newDays > oldDays:
		r.about(Narrowing, fqn, "audit retention raised to %d days, was %d", newDays, oldDays)
	}
}

// moved is how a requirement moved in a direction.
func moved(d Direction) string {
	if d == Widening {
		return "lowered"
	}
	return "raised"
}

// strengthened is how a safeguard moved in a direction.
func strengthened(d Direction) string {
	if d == Widening {
		return "weakened"
	}
	return "strengthened"
}
