package manifest

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys of a limit entry and of its kinds, and the spellings of key
// parts and windows, in the order the messages list them.
var (
	limitKeys       = []string{"id", "tool", "tool_set", "all_tools", "description", "key", "rate", "concurrency", "cost", "soft"}
	rateKeys        = []string{"count", "window"}
	concurrencyKeys = []string{"in_flight"}
	// KeyParts are the parts a limit's key may name.
	KeyParts = []string{"tenant", "subject", "agent", "tool"}
	// Windows are the windows a rate may have.
	Windows = []string{"second", "minute", "hour", "day"}
)

// Limit is one entry of the manifest's limits: a limit the deployment adds
// to the tools it names, or tightens where a tool's contract already has a
// limit of that id. Exactly one of Tool, ToolSet and AllTools names the
// tools. A term left out is nil (or empty) here; whether the entry is
// complete enough to add, and whether it tightens rather than loosens, is
// the build's to judge against each tool's contract.
type Limit struct {
	ID       string
	Tool     string // a tool's short name or FQN
	ToolSet  string
	AllTools bool
	// Description is nil when the key is absent.
	Description *string
	// Key is nil when the key is absent; parts as spelled (KeyParts).
	Key         []string
	Rate        *Rate
	Concurrency *Concurrency
	Cost        *uint32
	Soft        *bool
	// Line and Column are the entry's; At holds the position of each key
	// the entry gives ("tool", "rate", ...), for messages about one term.
	Line, Column int
	At           map[string]Position
}

// Rate is a limit entry's rate; a term left out is nil.
type Rate struct {
	Count  *uint32
	Window string // one of Windows, or empty when absent
}

// Concurrency is a limit entry's concurrency bound.
type Concurrency struct {
	InFlight *uint32
}

// Position is a line and column of the manifest, 1-based.
type Position struct{ Line, Column int }

// Target names the tools an entry applies to, as messages say it: `tool
// "x"`, `tool set "y"` or "every tool".
func (l Limit) Target() string {
	switch {
	case l.Tool != "":
		return `tool "` + l.Tool + `"`
	case l.ToolSet != "":
		return `tool set "` + l.ToolSet + `"`
	}
	return "every tool"
}

// limits reads the list of limit entries. Each needs an id and exactly one
// of tool, tool_set and all_tools: true; every other term is checked for
// shape and spelling only.
func (r *reader) limits(n *yaml.Node) []Limit {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.atNode(n, "%q must be a list, not %s", "limits", describe(n))
		return nil
	}
	var out []Limit
	for _, e := range n.Content {
		if !r.plain(e) {
			continue
		}
		if e.Kind != yaml.MappingNode {
			r.atNode(e, "a limit must be a mapping with %q and one of %q, %q or %q, not %s", "id", "tool", "tool_set", "all_tools", describe(e))
			continue
		}
		if l, ok := r.limit(e); ok {
			out = append(out, l)
		}
	}
	return out
}

func (r *reader) limit(e *yaml.Node) (Limit, bool) {
	fields := r.fields(e, " in a limit", limitKeys)
	l := Limit{Line: e.Line, Column: e.Column, At: map[string]Position{}}
	for k, v := range fields {
		l.At[k] = Position{v.Line, v.Column}
	}
	ok := true
	if v, given := fields["id"]; !given {
		r.atNode(e, "a limit needs an %q", "id")
		ok = false
	} else if s, good := r.str(v, `"id"`); !good || s == "" {
		if good {
			r.atNode(v, "a limit's %q is empty", "id")
		}
		ok = false
	} else {
		l.ID = s
	}
	targets := 0
	for _, key := range []string{"tool", "tool_set"} {
		v, given := fields[key]
		if !given {
			continue
		}
		targets++
		s, good := r.str(v, `"`+key+`"`)
		switch {
		case good && s == "":
			r.atNode(v, "a limit's %q is empty", key)
			ok = false
		case !good:
			ok = false
		case key == "tool":
			l.Tool = s
		default:
			l.ToolSet = s
		}
	}
	if v, given := fields["all_tools"]; given {
		targets++
		if b, good := r.boolean(v, `"all_tools"`); good && !b {
			r.atNode(v, "%q is true or left out; name a tool or a tool set instead", "all_tools")
			ok = false
		} else if !good {
			ok = false
		}
		l.AllTools = true
	}
	switch {
	case targets == 0:
		r.atNode(e, "a limit names what it applies to: one of %q, %q or %q", "tool", "tool_set", "all_tools: true")
		ok = false
	case targets > 1:
		r.atNode(e, "a limit names one of %q, %q or %q, not several", "tool", "tool_set", "all_tools")
		ok = false
	}
	if v, given := fields["description"]; given {
		if s, good := r.str(v, `"description"`); good {
			l.Description = &s
		}
	}
	if v, given := fields["key"]; given {
		l.Key = r.keyParts(v)
	}
	if v, given := fields["rate"]; given {
		l.Rate = r.rate(v)
	}
	if v, given := fields["concurrency"]; given {
		l.Concurrency = r.concurrency(v)
	}
	if v, given := fields["cost"]; given {
		c := r.count(v, `"cost"`)
		l.Cost = &c
	}
	if v, given := fields["soft"]; given {
		if b, good := r.boolean(v, `"soft"`); good {
			l.Soft = &b
		}
	}
	return l, ok
}

// keyParts reads a key: a non-empty list of known part names. Whether the
// parts go together is lint's (L51).
func (r *reader) keyParts(n *yaml.Node) []string {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		r.atNode(n, "a limit's %q must be a list of one or more of %s, not %s", "key", strings.Join(KeyParts, ", "), describe(n))
		return nil
	}
	out := []string{}
	for _, e := range n.Content {
		s, ok := r.str(e, "a key part")
		if !ok {
			continue
		}
		if !slices.Contains(KeyParts, s) {
			r.atNode(e, "key part %q is not one of %s", s, strings.Join(KeyParts, ", "))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) rate(n *yaml.Node) *Rate {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		r.atNode(n, "a limit's %q must be a mapping with %q and %q, not %s", "rate", "count", "window", describe(n))
		return nil
	}
	fields := r.fields(n, " in a rate", rateKeys)
	rate := &Rate{}
	if v, given := fields["count"]; given {
		c := r.count(v, `"count"`)
		rate.Count = &c
	}
	if v, given := fields["window"]; given {
		if s, ok := r.str(v, `"window"`); ok {
			if slices.Contains(Windows, s) {
				rate.Window = s
			} else {
				r.atNode(v, "a rate's %q must be one of %s, not %q", "window", strings.Join(Windows, ", "), s)
			}
		}
	}
	return rate
}

func (r *reader) concurrency(n *yaml.Node) *Concurrency {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		r.atNode(n, "a limit's %q must be a mapping with %q, not %s", "concurrency", "in_flight", describe(n))
		return nil
	}
	fields := r.fields(n, " in a concurrency bound", concurrencyKeys)
	c := &Concurrency{}
	if v, given := fields["in_flight"]; given {
		f := r.count(v, `"in_flight"`)
		c.InFlight = &f
	}
	return c
}

// boolean reads a true or false.
func (r *reader) boolean(n *yaml.Node, what string) (bool, bool) {
	if !r.plain(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		r.atNode(n, "%s must be true or false, not %s", what, describe(n))
		return false, false
	}
	return n.Value == "true", true
}
