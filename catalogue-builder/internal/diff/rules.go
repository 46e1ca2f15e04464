package diff

import (
	"fmt"
	"slices"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// declaredRule is one instance rule as diff compares it.
type declaredRule struct {
	phase, id, expression, field string
	auditOnly                    bool
}

func instanceRules(p *toolv1.InstancePolicy) map[string]declaredRule {
	out := map[string]declaredRule{}
	for _, r := range p.GetRequire() {
		out["require "+r.GetId()] = declaredRule{"require", r.GetId(), r.GetExpression(), "", r.GetAuditOnly()}
	}
	for _, r := range p.GetReveal() {
		out["reveal "+r.GetId()] = declaredRule{"reveal", r.GetId(), r.GetExpression(), "", r.GetAuditOnly()}
	}
	for _, f := range p.GetFilter() {
		out["filter "+f.GetId()] = declaredRule{"filter", f.GetId(), f.GetKeep(), f.GetField(), f.GetAuditOnly()}
	}
	return out
}

// instance reports the instance rules of a tool: an enforced rule added,
// or an audit-only one enforced, narrows who reaches which records; the
// reverse widens. An audit-only rule added or removed decides nothing. A
// changed expression or filtered field needs a person.
func (r *report) instance(fqn string, was, is *toolv1.InstancePolicy) {
	before, after := instanceRules(was), instanceRules(is)
	for key, n := range after {
		o, kept := before[key]
		what := fmt.Sprintf("%s rule %s", n.phase, n.id)
		switch {
		case !kept && n.auditOnly:
			r.about(Unclear, fqn, "new audit-only %s (records, decides nothing)", what)
		case !kept:
			r.about(Narrowing, fqn, "new %s", what)
		case o.auditOnly && !n.auditOnly:
			r.about(Narrowing, fqn, "%s now enforced, was audit-only", what)
		case !o.auditOnly && n.auditOnly:
			r.about(Widening, fqn, "%s now audit-only, was enforced", what)
		}
		if kept && o.expression != n.expression {
			r.about(Unclear, fqn, "%s changed to %q, was %q", what, n.expression, o.expression)
		}
		if kept && o.field != n.field {
			r.about(Unclear, fqn, "%s filters %s, was %s", what, n.field, o.field)
		}
	}
	for key, o := range before {
		if _, kept := after[key]; kept {
			continue
		}
		what := fmt.Sprintf("%s rule %s", o.phase, o.id)
		if o.auditOnly {
			r.about(Unclear, fqn, "audit-only %s removed", what)
		} else {
			r.about(Widening, fqn, "%s removed", what)
		}
	}
}

// attributes reports declared principal attributes added, removed or
// changed. None of these alone moves who reaches what — every rule that
// reads one is checked against the new declarations at build — but a new
// meaning or bound under a name tokens already carry needs a person.
func (r *report) attributes(old, new []*toolv1.Attribute) {
	was := map[string]*toolv1.Attribute{}
	for _, a := range old {
		was[a.GetName()] = a
	}
	names := map[string]bool{}
	for _, a := range new {
		names[a.GetName()] = true
		o, ok := was[a.GetName()]
		switch {
		case !ok:
			r.add(Unclear, "", "attribute %s declared (%s)", a.GetName(), attributeShape(a))
		case attributeShape(o) != attributeShape(a) || o.GetDescription() != a.GetDescription():
			r.add(Unclear, "", "attribute %s is now %s %q, was %s %q", a.GetName(), attributeShape(a), a.GetDescription(), attributeShape(o), o.GetDescription())
		}
	}
	removed := []string{}
	for n := range was {
		if !names[n] {
			removed = append(removed, n)
		}
	}
	slices.Sort(removed)
	for _, n := range removed {
		r.add(Unclear, "", "attribute %s no longer declared", n)
	}
}

func attributeShape(a *toolv1.Attribute) string {
	s := name(a.GetType())
	if a.GetMaxItems() > 0 {
		s += fmt.Sprintf(", max_items %d", a.GetMaxItems())
	}
	if a.GetMaxLen() > 0 {
		s += fmt.Sprintf(", max_len %d", a.GetMaxLen())
	}
	return s
}
