package idp

import (
	"maps"
	"slices"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
)

// garmClaim is the garm claim of one level of a token (design 7.5), spelt with the prefixed enum
// names. Compartments and verbs are always present, empty or not; tool_sets only when the
// persona is scoped, because an absent claim is what garmd reads as unscoped.
type garmClaim struct {
	Clearance    string   `json:"clearance"`
	Compartments []string `json:"compartments"`
	Verbs        []string `json:"verbs"`
	ToolSets     []string `json:"tool_sets,omitempty"`
	Kind         string   `json:"kind"`
	// Attrs are the persona's own attributes (garm.attrs), absent when it declares none. They
	// are never folded with another level's here: garmd folds the chain, and only narrows.
	Attrs map[string]any `json:"attrs,omitempty"`
}

// actorClaim is the RFC 8693 act claim: the agent acting for the token's subject.
type actorClaim struct {
	Subject string    `json:"sub"`
	Garm    garmClaim `json:"garm"`
}

// execClaim names the runner executing the call (attribution only, top level only).
type execClaim struct {
	Subject string `json:"sub"`
	Issuer  string `json:"iss"`
}

// tokenClaims is the whole payload; aud is a single string.
type tokenClaims struct {
	Issuer    string      `json:"iss"`
	Subject   string      `json:"sub"`
	Audience  string      `json:"aud"`
	IssuedAt  int64       `json:"iat"`
	NotBefore int64       `json:"nbf"`
	Expiry    int64       `json:"exp"`
	ID        string      `json:"jti"`
	Tenant    string      `json:"tenant"`
	Garm      garmClaim   `json:"garm"`
	Act       *actorClaim `json:"act,omitempty"`
	Exec      *execClaim  `json:"exec,omitempty"`
}

// principal is a user or agent with its roles already folded.
type principal struct {
	subject string
	garm    garmClaim
	// mayActFor is the set of user handles an agent may act for; nil for users.
	mayActFor map[string]bool
}

// foldRoles unions a persona's roles into one garm claim. Roles grant, so the fold is a union:
// the highest clearance, every compartment and verb of any role, and the union of tool sets —
// unless some role names no tool sets, in which case that role already reaches every tool and
// the persona is unscoped. This is the opposite of garmd's fold over a delegation chain, which
// intersects, because there each level restricts the next. The roles must have been validated.
func foldRoles(roles map[string]Role, names []string, kind toolv1.PrincipalKind) garmClaim {
	clearance := toolv1.Clearance_CLEARANCE_UNSPECIFIED
	compartments := map[string]bool{}
	verbs := map[toolv1.Verb]bool{}
	toolSets := map[string]bool{}
	scoped := len(names) > 0
	for _, name := range names {
		r := roles[name]
		if lvl, ok := clearanceOf(r.Clearance); ok && lvl > clearance {
			clearance = lvl
		}
		for _, c := range r.Compartments {
			compartments[c] = true
		}
		for _, v := range r.Verbs {
			if verb, ok := verbOf(v); ok {
				verbs[verb] = true
			}
		}
		if len(r.ToolSets) == 0 {
			scoped = false
		}
		for _, s := range r.ToolSets {
			toolSets[s] = true
		}
	}
	claim := garmClaim{
		Clearance:    clearance.String(),
		Compartments: append([]string{}, slices.Sorted(maps.Keys(compartments))...),
		Verbs:        []string{},
		Kind:         kind.String(),
	}
	// Verbs are listed in the vocabulary's order (by enum number), not alphabetically.
	for _, v := range slices.Sorted(maps.Keys(verbs)) {
		claim.Verbs = append(claim.Verbs, v.String())
	}
	if scoped {
		claim.ToolSets = slices.Sorted(maps.Keys(toolSets))
	}
	return claim
}

// userKind is a user's declared kind, USER when it declares none.
func userKind(u User) toolv1.PrincipalKind {
	if kind, ok := kindOf(u.Kind); ok {
		return kind
	}
	return toolv1.PrincipalKind_PRINCIPAL_KIND_USER
}

// foldPersonas folds every user and agent of a valid file.
func foldPersonas(p *Personas) (users, agents map[string]principal) {
	users = make(map[string]principal, len(p.Users))
	for handle, u := range p.Users {
		garm := foldRoles(p.Roles, u.Roles, userKind(u))
		garm.Attrs = canonicalAttrs(u.Attrs)
		users[handle] = principal{subject: u.Subject, garm: garm}
	}
	agents = make(map[string]principal, len(p.Agents))
	for handle, a := range p.Agents {
		may := make(map[string]bool, len(a.MayActFor))
		for _, user := range a.MayActFor {
			may[user] = true
		}
		garm := foldRoles(p.Roles, a.Roles, toolv1.PrincipalKind_PRINCIPAL_KIND_AGENT)
		garm.Attrs = canonicalAttrs(a.Attrs)
		agents[handle] = principal{subject: a.Subject, garm: garm, mayActFor: may}
	}
	return users, agents
}
