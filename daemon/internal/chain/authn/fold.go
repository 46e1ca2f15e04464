package authn

import (
	"slices"

	"github.com/garm-dev/garm/daemon/internal/call"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
)

// Taxonomy numbers compartment names as one catalogue generation declares
// them. The serving generation implements it: set holds the bits of the
// names it declares, kept lists those names, dropped the names it does not
// declare.
//
// Verified tokens are cached per Taxonomy value, so a Taxonomy must be
// comparable and equal only to itself: a pointer, as a generation is. A
// Taxonomy whose dynamic type is not a pointer is served without the cache.
type Taxonomy interface {
	CompartmentSet(names []string) (set call.Compartments, kept, dropped []string)
	// DeclaredAttribute is the declaration of the principal attribute
	// name, or nil when the generation declares none by that name.
	DeclaredAttribute(name string) *toolv1.Attribute
	// PrincipalView is p as the generation's instance rules read it, or
	// nil when it has none; built once per verified token and generation,
	// and cached with the principal.
	PrincipalView(p *call.Principal) *celrule.View
}

// fold is the chain's authority as one principal (design 7.5), and the
// compartment names the chain holds in common that tax does not declare.
// Authority is the intersection over the levels: the lowest clearance, the
// compartments and verbs every level holds, and the tool sets every level
// that names a scope names. Adding a level can only narrow it.
func fold(c *claims, tax Taxonomy) (p *call.Principal, dropped, undeclared []string) {
	subject := &c.levels[0]
	p = &call.Principal{
		Subject:          subject.subject,
		Kind:             subject.kind,
		Tenant:           c.tenant,
		JTI:              c.jti,
		Clearance:        subject.clearance,
		Verbs:            subject.verbs,
		ExecutionSubject: c.execSubject,
		Expiry:           c.expiry,
	}
	common := setOf(subject.compartments)
	var scope map[string]bool
	if len(c.levels) > 1 {
		p.Act = make([]call.Actor, 0, len(c.levels)-1)
	}
	for i := range c.levels {
		l := &c.levels[i]
		if i > 0 {
			p.Act = append(p.Act, call.Actor{Subject: l.subject, Kind: l.kind})
			p.Clearance = min(p.Clearance, l.clearance)
			p.Verbs &= l.verbs
			common = intersect(common, l.compartments)
		}
		if !l.scoped {
			continue
		}
		if !p.Scoped {
			p.Scoped, scope = true, setOf(l.toolSets)
		} else {
			scope = intersect(scope, l.toolSets)
		}
	}
	p.ToolSets = scope

	if len(common) > 0 {
		names := make([]string, 0, len(common))
		for name := range common {
			names = append(names, name)
		}
		slices.Sort(names)
		var kept []string
		p.Compartments, kept, dropped = tax.CompartmentSet(names)
		if len(kept) > 0 {
			p.CompartmentNames = slices.Clone(kept)
			slices.Sort(p.CompartmentNames)
		}
	}
	p.Attrs, undeclared = foldAttrs(c.levels, tax)
	return p, dropped, undeclared
}

// setOf is names as a set; never nil, so an empty scope stays a scope.
func setOf(names []string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

// intersect removes from s every name not in names, and returns s.
func intersect(s map[string]bool, names []string) map[string]bool {
	if len(s) == 0 {
		return s
	}
	keep := setOf(names)
	for n := range s {
		if !keep[n] {
			delete(s, n)
		}
	}
	return s
}
