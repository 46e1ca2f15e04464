package idp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Personas is a persona file: the tenant every token names, the roles, and the users and agents
// that hold them. Field names are the file's keys; [ParsePersonas] reads YAML (and so JSON) with
// unknown keys refused.
type Personas struct {
	// Tenant is the tenant claim of every token.
	Tenant string `yaml:"tenant" json:"tenant"`
	// Roles by name.
	Roles map[string]Role `yaml:"roles" json:"roles"`
	// Users by handle: the subjects a token is issued for.
	Users map[string]User `yaml:"users" json:"users"`
	// Agents by handle: actors that may act for the users they list.
	Agents map[string]Agent `yaml:"agents" json:"agents"`
}

// Role is a bundle of authority. A persona's roles fold into one garm claim: see [Personas] and
// the package documentation for the exact rule.
type Role struct {
	// Clearance is bare (INTERNAL) or prefixed (CLEARANCE_INTERNAL), case-insensitive. A role may
	// leave it empty when it only adds compartments, verbs or tool sets.
	Clearance string `yaml:"clearance,omitempty" json:"clearance,omitempty"`
	// Compartments are declared names (design 3.1 grammar).
	Compartments []string `yaml:"compartments,omitempty" json:"compartments,omitempty"`
	// Verbs are bare (READ) or prefixed (VERB_READ), case-insensitive.
	Verbs []string `yaml:"verbs,omitempty" json:"verbs,omitempty"`
	// ToolSets scopes the role to these tool sets; a role that names none is unscoped.
	ToolSets []string `yaml:"tool_sets,omitempty" json:"tool_sets,omitempty"`
}

// User is a persona a token can be issued for.
type User struct {
	// Subject is the token's sub; unique across users and agents.
	Subject string `yaml:"subject" json:"subject"`
	// Roles names roles of the same file.
	Roles []string `yaml:"roles" json:"roles"`
	// Kind is USER, AGENT or SERVICE (PRINCIPAL_KIND_ prefix optional); empty means USER.
	Kind string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Attrs are the facts about the user that instance rules read as principal.attrs.<name>,
	// issued as the token's garm.attrs: see [Agent.Attrs] for the shapes a value may take.
	Attrs map[string]any `yaml:"attrs,omitempty" json:"attrs,omitempty"`
}

// Agent is a persona that acts for users: it appears in a token only as the act claim.
type Agent struct {
	// Subject is the act claim's sub; unique across users and agents.
	Subject string `yaml:"subject" json:"subject"`
	// Roles names roles of the same file.
	Roles []string `yaml:"roles" json:"roles"`
	// MayActFor lists the user handles this agent may act for.
	MayActFor []string `yaml:"may_act_for" json:"may_act_for"`
	// Attrs are the agent's own attributes, issued as act.garm.attrs whenever it acts for a
	// user. garmd folds them over the user's so that they only narrow: a list intersects the
	// user's, a scalar that disagrees drops the attribute, and a name the user lacks adds
	// nothing. A value is a non-empty string, an integer, a boolean or a list of non-empty
	// strings (canonically string, int64, bool or []string); a name matches
	// ^[a-z][a-z0-9_]{0,62}$. Whether the catalogue declares it, with that type and within its
	// bounds, is garmd's to judge, not the IdP's.
	Attrs map[string]any `yaml:"attrs,omitempty" json:"attrs,omitempty"`
}

// PersonaError is a persona file that does not validate: every problem found, in a stable order.
type PersonaError struct {
	Problems []string
}

func (e *PersonaError) Error() string {
	return fmt.Sprintf("invalid persona file (%d problems): %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// LoadPersonas reads and validates the persona file at path.
func LoadPersonas(path string) (*Personas, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read persona file: %w", err)
	}
	p, err := ParsePersonas(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ParsePersonas decodes one YAML document strictly (unknown keys, duplicate keys and a second
// document are refused), validates it, and returns it with every spelling canonical: clearances,
// verbs and kinds as their enum names, a user's empty kind filled in.
func ParsePersonas(data []byte) (*Personas, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Personas
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("persona file is empty")
		}
		return nil, fmt.Errorf("decode persona file: %w", err)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("persona file holds more than one YAML document")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.canonical(), nil
}

// Validate reports every problem of the file at once as a [*PersonaError]: a missing tenant or
// subject, an unknown role or may_act_for user, a misspelt clearance, verb or kind, a malformed
// name, a persona whose roles give it no clearance, an agent that may act for no one, a subject
// used twice, a handle that is both a user and an agent, and an attribute whose name is
// malformed or whose value no attribute type could hold.
func (p *Personas) Validate() error {
	var problems []string
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	if p.Tenant == "" {
		report("tenant: missing")
	}
	if len(p.Users) == 0 {
		report("users: none declared")
	}
	for _, name := range slices.Sorted(maps.Keys(p.Roles)) {
		validateRole("roles."+name, name, p.Roles[name], report)
	}
	subjects := map[string]string{} // subject → the first persona path that used it
	claimSubject := func(path, subject string) {
		if subject == "" {
			report("%s: subject missing", path)
			return
		}
		if first, ok := subjects[subject]; ok {
			report("%s: subject %q is already %s's", path, subject, first)
			return
		}
		subjects[subject] = path
	}
	for _, handle := range slices.Sorted(maps.Keys(p.Users)) {
		u, path := p.Users[handle], "users."+handle
		checkHandle(path, handle, report)
		claimSubject(path, u.Subject)
		p.validateRoles(path, u.Roles, report)
		if u.Kind != "" {
			if _, ok := kindOf(u.Kind); !ok {
				report("%s: kind %q is not USER, AGENT or SERVICE", path, u.Kind)
			}
		}
		validateAttrs(path, u.Attrs, report)
	}
	for _, handle := range slices.Sorted(maps.Keys(p.Agents)) {
		a, path := p.Agents[handle], "agents."+handle
		checkHandle(path, handle, report)
		if _, ok := p.Users[handle]; ok {
			report("%s: handle %q is also a user", path, handle)
		}
		claimSubject(path, a.Subject)
		p.validateRoles(path, a.Roles, report)
		if len(a.MayActFor) == 0 {
			report("%s: may_act_for is empty (an agent is only ever issued acting for a user)", path)
		}
		for _, user := range a.MayActFor {
			if _, ok := p.Users[user]; !ok {
				report("%s: may_act_for names unknown user %q", path, user)
			}
		}
		validateAttrs(path, a.Attrs, report)
	}
	if len(problems) > 0 {
		return &PersonaError{Problems: problems}
	}
	return nil
}

func checkHandle(path, handle string, report func(string, ...any)) {
	if !handleName.MatchString(handle) {
		report("%s: handle %q does not match %s", path, handle, handleName)
	}
}

func validateRole(path, name string, r Role, report func(string, ...any)) {
	if !handleName.MatchString(name) {
		report("%s: role name %q does not match %s", path, name, handleName)
	}
	if r.Clearance != "" {
		if _, ok := clearanceOf(r.Clearance); !ok {
			report("%s: clearance %q is not a clearance level", path, r.Clearance)
		}
	}
	for _, v := range r.Verbs {
		if _, ok := verbOf(v); !ok {
			report("%s: verb %q is not READ, WRITE or DESTRUCTIVE", path, v)
		}
	}
	for _, c := range r.Compartments {
		if !isDeclName(c) {
			report("%s: compartment %q is not a valid name", path, c)
		}
	}
	for _, s := range r.ToolSets {
		if !isDeclName(s) {
			report("%s: tool set %q is not a valid name", path, s)
		}
	}
}

// validateRoles checks a persona's role list: every role exists, and together they give the
// persona a clearance (a token without one is refused by garmd, so the file is refused here).
func (p *Personas) validateRoles(path string, roles []string, report func(string, ...any)) {
	hasClearance, allKnown := false, true
	for _, name := range roles {
		r, ok := p.Roles[name]
		if !ok {
			report("%s: unknown role %q", path, name)
			allKnown = false
			continue
		}
		if _, ok := clearanceOf(r.Clearance); ok {
			hasClearance = true
		}
	}
	if allKnown && !hasClearance {
		report("%s: no role gives a clearance", path)
	}
}

// canonical is a deep copy of a valid file with every spelling canonical and every empty list
// nil, so the JSON served at /personas reads back to an equal value.
func (p *Personas) canonical() *Personas {
	out := &Personas{
		Tenant: p.Tenant,
		Roles:  make(map[string]Role, len(p.Roles)),
		Users:  make(map[string]User, len(p.Users)),
		Agents: make(map[string]Agent, len(p.Agents)),
	}
	for name, r := range p.Roles {
		c := Role{Compartments: clone(r.Compartments), ToolSets: clone(r.ToolSets)}
		if lvl, ok := clearanceOf(r.Clearance); ok {
			c.Clearance = lvl.String()
		}
		for _, v := range r.Verbs {
			verb, _ := verbOf(v)
			c.Verbs = append(c.Verbs, verb.String())
		}
		out.Roles[name] = c
	}
	for handle, u := range p.Users {
		out.Users[handle] = User{Subject: u.Subject, Roles: clone(u.Roles), Kind: userKind(u).String(), Attrs: canonicalAttrs(u.Attrs)}
	}
	for handle, a := range p.Agents {
		out.Agents[handle] = Agent{
			Subject: a.Subject, Roles: clone(a.Roles), MayActFor: clone(a.MayActFor), Attrs: canonicalAttrs(a.Attrs),
		}
	}
	return out
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
