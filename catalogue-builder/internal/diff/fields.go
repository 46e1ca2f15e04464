package diff

import (
	"fmt"
	"strings"

	"github.com/garm-dev/garm/catalogue-builder/artifact"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// plan is the plan an artifact holds for one of a tool's messages; the
// artifact was checked to hold one for every tool input and output.
func plan(a *artifact.Artifact, t *compile.Tool, md protoreflect.MessageDescriptor) *planv1.MessagePlan {
	return a.Plan(string(t.Desc.ParentFile().Package()), string(md.FullName()))
}

// fields reports the field rules of one side of a kept tool, matched by
// path. Each rule is compared as declared, not folded with its parents':
// a sentence then points at the one edit that caused it, and since a
// parent's label bounds its subtree, every change in what a caller can
// actually reach is the declared change of some rule on the path.
//
// Only what the chain consults on each side is compared. An answer's
// fields are read, so read, redaction and audit_on_read count there; a
// request's fields are written, so write and runner_sourced count there
// (design 7.4 step 3, 7.6). Compartments gate both.
func (r *report) fields(fqn, side string, old, new *planv1.MessagePlan) {
	was := map[string]*planv1.FieldRule{}
	for _, rule := range old.GetRules() {
		was[rule.GetPath()] = rule
	}
	is := map[string]*planv1.FieldRule{}
	for _, rule := range new.GetRules() {
		is[rule.GetPath()] = rule
		before := was[rule.GetPath()]
		if before == nil {
			// Every new field is named with its own label, children of a
			// new message field included: each is new data a reviewer
			// must place.
			r.about(Widening, fqn, "new %s field %s %s at %s", side, rule.GetPath(), access(side), label(gate(side, rule), rule.GetCompartments()))
			continue
		}
		r.rule(fqn, side, before, rule)
	}
	for _, rule := range old.GetRules() {
		// A removed subtree is one change, at its root.
		if is[rule.GetPath()] == nil && !parentRemoved(rule.GetPath(), is, was) {
			r.about(Narrowing, fqn, "%s field %s removed", side, rule.GetPath())
		}
	}
}

// rule reports what changed in one field both plans hold.
func (r *report) rule(fqn, side string, was, is *planv1.FieldRule) {
	field := side + " field " + is.GetPath()
	if d, ok := strength(requirement(gate(side, was)), requirement(gate(side, is))); ok {
		r.about(d, fqn, "%s %s at %s, was %s", field, access(side), name(gate(side, is)), name(gate(side, was)))
	}
	removed, added := setDiff(was.GetCompartments(), is.GetCompartments())
	for _, c := range removed {
		r.about(Widening, fqn, "%s no longer needs compartment %s", field, c)
	}
	for _, c := range added {
		r.about(Narrowing, fqn, "%s now needs compartment %s", field, c)
	}
	if side == "input" {
		if was.GetRunnerSourced() != is.GetRunnerSourced() {
			r.about(Unclear, fqn, "%s now supplied by the %s, was by the %s", field, supplier(is), supplier(was))
		}
		return
	}
	// What a denied caller sees instead of the value: whether one
	// transform reveals more than another depends on the data, so a
	// change is for a person to judge.
	if a, b := redaction(was.GetOnDeny()), redaction(is.GetOnDeny()); a != b {
		r.about(Unclear, fqn, "%s redacted by %s when denied, was %s", field, b, a)
	}
	switch {
	case was.GetAuditOnRead() && !is.GetAuditOnRead():
		r.about(Widening, fqn, "%s no longer counted on the ledger when read", field)
	case !was.GetAuditOnRead() && is.GetAuditOnRead():
		r.about(Narrowing, fqn, "%s now counted on the ledger when read", field)
	}
}

// gate is the clearance that governs a field on a side: write for a
// request, read for an answer.
func gate(side string, rule *planv1.FieldRule) toolv1.Clearance {
	if side == "input" {
		return rule.GetWrite()
	}
	return rule.GetRead()
}

func access(side string) string {
	if side == "input" {
		return "writable"
	}
	return "readable"
}

func supplier(rule *planv1.FieldRule) string {
	if rule.GetRunnerSourced() {
		return "runner"
	}
	return "caller"
}

// parentRemoved reports whether a path lies under a field that new lost.
func parentRemoved(path string, is, was map[string]*planv1.FieldRule) bool {
	for i := strings.LastIndexByte(path, '.'); i > 0; i = strings.LastIndexByte(path[:i], '.') {
		parent := path[:i]
		if was[parent] != nil && is[parent] == nil {
			return true
		}
	}
	return false
}

// redaction describes a transform by what it does, so two that behave the
// same describe the same: the reason keep_last and truncate carry is prose
// for the reader of the .proto and changes nothing a caller sees. An unset
// arm is omit, as garmd applies it (design 7.7).
func redaction(r *toolv1.Redaction) string {
	switch k := r.GetKind().(type) {
	case *toolv1.Redaction_Mask_:
		if with := k.Mask.GetWith(); with != "" {
			return fmt.Sprintf("mask %q", with)
		}
		return "mask"
	case *toolv1.Redaction_Hash_:
		if k.Hash.GetPerTenantSalt() {
			return "hash with a per-tenant salt"
		}
		return "hash"
	case *toolv1.Redaction_EmailDomain_:
		return "email_domain"
	case *toolv1.Redaction_KeepLast_:
		return fmt.Sprintf("keep_last %d%s", k.KeepLast.GetN(), unit(k.KeepLast.GetRunes()))
	case *toolv1.Redaction_Truncate_:
		return fmt.Sprintf("truncate %d%s", k.Truncate.GetN(), unit(k.Truncate.GetRunes()))
	case *toolv1.Redaction_CardBinLast4_:
		return "card_bin_last4"
	case *toolv1.Redaction_IpPrefix_:
		return fmt.Sprintf("ip_prefix /%d", k.IpPrefix.GetBits())
	case *toolv1.Redaction_UrlOrigin_:
		return "url_origin"
	case *toolv1.Redaction_DateGrain_:
		return "date_grain " + name(k.DateGrain.GetGrain())
	}
	return "omit"
}

func unit(runes bool) string {
	if runes {
		return " runes"
	}
	return " bytes"
}
