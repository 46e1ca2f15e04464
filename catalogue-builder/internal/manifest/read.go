package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys each level understands, in the order the messages list them.
var (
	topKeys       = []string{"schema", "name", "source", "include", "taxonomy", "limits"}
	taxonomyKeys  = []string{"compartments", "tool_sets", "attributes"}
	declKeys      = []string{"name", "description"}
	attributeKeys = []string{"name", "description", "type", "max_items", "max_len"}
	// attributeTypes are the types an attribute may have, as the manifest
	// spells them.
	attributeTypes = []string{"string", "int", "bool", "string_list"}
)

// reader walks the YAML node tree itself, rather than decoding into structs,
// so that every problem has the position of the node it concerns and none
// stops the walk.
type reader struct {
	path     string
	dir      string
	problems Problems
}

func (r *reader) at(line, column int, format string, args ...any) {
	r.problems = append(r.problems, Problem{Path: r.path, Line: line, Column: column, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) atNode(n *yaml.Node, format string, args ...any) {
	r.at(n.Line, n.Column, format, args...)
}

func (r *reader) read(data []byte) *Manifest {
	m := &Manifest{}
	root, ok := r.document(data)
	if !ok {
		return m
	}
	if root == nil {
		r.at(1, 1, "missing required key %q", "schema")
		r.at(1, 1, "missing required key %q", "include")
		return m
	}
	if !r.plain(root) {
		return m
	}
	if root.Kind != yaml.MappingNode {
		r.atNode(root, "the manifest must be a mapping of keys, not %s", describe(root))
		return m
	}
	fields := r.fields(root, "", topKeys)

	if n, ok := fields["schema"]; !ok {
		r.atNode(root, "missing required key %q", "schema")
	} else if s, ok := r.str(n, `"schema"`); ok {
		if s != SchemaV1 {
			r.atNode(n, "unsupported schema %q: this garm-catalogue reads %s", s, SchemaV1)
		}
		m.Schema = s
	}
	if n, ok := fields["name"]; ok {
		m.Name, _ = r.str(n, `"name"`)
	}
	if n, ok := fields["source"]; ok {
		m.Source, _ = r.str(n, `"source"`)
	}
	if n, ok := fields["include"]; !ok {
		r.atNode(root, "missing required key %q", "include")
	} else {
		m.Include = r.includes(n)
	}
	if n, ok := fields["taxonomy"]; ok {
		m.Taxonomy = r.taxonomy(n)
	}
	if n, ok := fields["limits"]; ok {
		m.Limits = r.limits(n)
	}
	return m
}

// yamlLine matches the position the YAML library puts in its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// document returns the root node of the only document in data, nil for an
// empty file (or one holding only comments or null). ok is false when the
// YAML does not parse, in which case nothing more can be said.
func (r *reader) document(data []byte) (root *yaml.Node, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, true
	} else if err != nil {
		r.syntax(err)
		return nil, false
	}
	var next yaml.Node
	if err := dec.Decode(&next); err != nil && !errors.Is(err, io.EOF) {
		r.syntax(err)
	} else if err == nil {
		r.atNode(&next, "a manifest is one YAML document; a second one starts here")
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	root = doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" && root.Style&yaml.TaggedStyle == 0 && root.Anchor == "" {
		return nil, true
	}
	return root, true
}

func (r *reader) syntax(err error) {
	msg, line := err.Error(), 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	r.at(line, 1, "invalid YAML: %s", msg)
}

// plain reports what makes a node more than plain data: an alias, an anchor,
// an explicit tag. It is false when the node's value should not be looked at
// further (an alias has none of its own; a tag changes what it means).
func (r *reader) plain(n *yaml.Node) bool {
	const why = "a manifest is plain data"
	if n.Kind == yaml.AliasNode {
		r.atNode(n, "aliases (*%s) are not allowed: %s", n.Value, why)
		return false
	}
	if n.Anchor != "" {
		r.atNode(n, "anchors (&%s) are not allowed: %s", n.Anchor, why)
	}
	if n.Style&yaml.TaggedStyle != 0 {
		r.atNode(n, "tags (%s) are not allowed: %s", n.Tag, why)
		return false
	}
	return true
}

// fields checks a mapping's keys — each a plain string, known, and written
// once — and returns the value of each known key. where names the mapping in
// messages (" in taxonomy"); the values of unknown and repeated keys are not
// looked at.
func (r *reader) fields(m *yaml.Node, where string, known []string) map[string]*yaml.Node {
	values := make(map[string]*yaml.Node, len(known))
	lines := make(map[string]int, len(known))
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], m.Content[i+1]
		if !r.plain(key) {
			continue
		}
		switch {
		case key.Kind == yaml.ScalarNode && key.ShortTag() == "!!merge":
			r.atNode(key, "merge keys (<<) are not allowed: a manifest is plain data")
			continue
		case key.Kind != yaml.ScalarNode:
			r.atNode(key, "keys must be strings, not %s", describe(key))
			continue
		}
		name := key.Value
		if first, seen := lines[name]; seen {
			r.atNode(key, "duplicate key %q%s (first on line %d)", name, where, first)
			continue
		}
		lines[name] = key.Line
		if key.ShortTag() != "!!str" || !slices.Contains(known, name) {
			r.atNode(key, "unknown key %q%s (known: %s)", name, where, strings.Join(known, ", "))
			continue
		}
		values[name] = value
	}
	return values
}

// str returns a string scalar; what names the value in the message.
func (r *reader) str(n *yaml.Node, what string) (string, bool) {
	if !r.plain(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		hint := ""
		if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
			hint = " (quote it to keep it as text)"
		}
		r.atNode(n, "%s must be a string, not %s%s", what, describe(n), hint)
		return "", false
	}
	return n.Value, true
}

func (r *reader) includes(n *yaml.Node) []Include {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.atNode(n, "%q must be a list of directories, not %s", "include", describe(n))
		return nil
	}
	if len(n.Content) == 0 {
		r.atNode(n, "%q must list at least one directory", "include")
		return nil
	}
	var out []Include
	first := map[string]Include{}
	for _, e := range n.Content {
		dir, ok := r.str(e, "an include entry")
		if !ok {
			continue
		}
		if dir == "" {
			r.atNode(e, "an include entry is empty")
			continue
		}
		inc := Include{Dir: dir, Abs: resolve(r.dir, dir), Line: e.Line, Column: e.Column}
		if prev, dup := first[inc.Abs]; dup {
			if prev.Dir == dir {
				r.atNode(e, "include %q is listed twice (first on line %d)", dir, prev.Line)
			} else {
				r.atNode(e, "include %q is the same directory as %q (line %d)", dir, prev.Dir, prev.Line)
			}
			continue
		}
		first[inc.Abs] = inc
		out = append(out, inc)
	}
	return out
}

func (r *reader) taxonomy(n *yaml.Node) *Taxonomy {
	if !r.plain(n) {
		return nil
	}
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
	if isNull || (n.Kind == yaml.MappingNode && len(n.Content) == 0) {
		r.atNode(n, "%q must list compartments, tool_sets or attributes; leave the key out to let the proto files declare them", "taxonomy")
		return nil
	}
	if n.Kind != yaml.MappingNode {
		r.atNode(n, "%q must be a mapping, not %s", "taxonomy", describe(n))
		return nil
	}
	fields := r.fields(n, " in taxonomy", taxonomyKeys)
	t := &Taxonomy{}
	if v, ok := fields["compartments"]; ok {
		t.Compartments = r.decls(v, "compartments", "compartment")
	}
	if v, ok := fields["tool_sets"]; ok {
		t.ToolSets = r.decls(v, "tool_sets", "tool set")
	}
	if v, ok := fields["attributes"]; ok {
		t.Attributes = r.attributes(v)
	}
	return t
}

// attributes reads the list of attribute declarations. Whether each is
// sound (its name, a list's max_items) is the lint's to judge (L44); the
// reader checks only the shape and the type's spelling.
func (r *reader) attributes(n *yaml.Node) []Attribute {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.atNode(n, "%q must be a list, not %s", "attributes", describe(n))
		return nil
	}
	var out []Attribute
	for _, e := range n.Content {
		if !r.plain(e) {
			continue
		}
		if e.Kind != yaml.MappingNode {
			r.atNode(e, "an attribute must be a mapping with %q, %q and %q, not %s", "name", "description", "type", describe(e))
			continue
		}
		fields := r.fields(e, " in an attribute", attributeKeys)
		a := Attribute{Line: e.Line, Column: e.Column}
		named := false
		if v, ok := fields["name"]; !ok {
			r.atNode(e, "an attribute needs a %q", "name")
		} else if s, ok := r.str(v, `"name"`); ok && s != "" {
			a.Name, named = s, true
		} else if ok {
			r.atNode(v, "an attribute's %q is empty", "name")
		}
		if v, ok := fields["description"]; ok {
			a.Description, _ = r.str(v, `"description"`)
		}
		if v, ok := fields["type"]; ok {
			if s, ok := r.str(v, `"type"`); ok {
				if slices.Contains(attributeTypes, s) {
					a.Type = s
				} else {
					r.atNode(v, "an attribute's %q must be one of %s, not %q", "type", strings.Join(attributeTypes, ", "), s)
				}
			}
		}
		a.MaxItems = r.count(fields["max_items"], `"max_items"`)
		a.MaxLen = r.count(fields["max_len"], `"max_len"`)
		if named {
			out = append(out, a)
		}
	}
	return out
}

// count reads an optional non-negative 32-bit integer; nil is 0.
func (r *reader) count(n *yaml.Node, what string) uint32 {
	if n == nil || !r.plain(n) {
		return 0
	}
	got := describe(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		if v, err := strconv.ParseUint(n.Value, 10, 32); err == nil {
			return uint32(v)
		}
		got = n.Value
	}
	r.atNode(n, "%s must be a whole number from 0 to %d, not %s", what, uint32(1<<32-1), got)
	return 0
}

// decls reads a list of declarations; key is the list's key, noun names one
// of its entries in messages.
func (r *reader) decls(n *yaml.Node, key, noun string) []Decl {
	if !r.plain(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		r.atNode(n, "%q must be a list, not %s", key, describe(n))
		return nil
	}
	var out []Decl
	where := " in a " + noun
	for _, e := range n.Content {
		if !r.plain(e) {
			continue
		}
		if e.Kind != yaml.MappingNode {
			r.atNode(e, "a %s must be a mapping with %q and %q, not %s", noun, "name", "description", describe(e))
			continue
		}
		fields := r.fields(e, where, declKeys)
		d := Decl{Line: e.Line, Column: e.Column}
		named := false
		if v, ok := fields["name"]; !ok {
			r.atNode(e, "a %s needs a %q", noun, "name")
		} else if s, ok := r.str(v, `"name"`); ok {
			if s == "" {
				r.atNode(v, "a %s's %q is empty", noun, "name")
			} else {
				d.Name, named = s, true
			}
		}
		if v, ok := fields["description"]; ok {
			d.Description, _ = r.str(v, `"description"`)
		}
		if named {
			out = append(out, d)
		}
	}
	return out
}

// describe names a node's kind for "must be X, not Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!null":
		return "null"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!timestamp":
		return "a timestamp"
	default:
		return n.ShortTag()
	}
}
