package compile

import (
	"fmt"
	"slices"
	"strings"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
)

// SchemaDialect is the $schema every assembled schema declares.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// AssembleSchema builds the whole JSON Schema of a plan's root message as a
// caller sees it: the shell, and every shown rule's fragment placed where its
// parent's container says (a MESSAGE's "properties", a LIST_OF_MESSAGES's
// "items.properties", a MAP_OF_MESSAGES's "additionalProperties.properties"),
// with each object's "required" listing its shown required children, sorted.
// A rule that is not shown takes its whole subtree with it, and the oneof
// constraints of its parent forget it, so the schema never names a field the
// caller is not shown. nil shown shows everything. The output is compact JSON
// with sorted keys: the same plan and the same shown rules give the same
// bytes.
//
// A rule's parent is the rule whose path is its path without the last
// segment; plans list parents before children (PlanMessage).
func AssembleSchema(plan *planv1.MessagePlan, shown func(*planv1.FieldRule) bool) ([]byte, error) {
	if shown == nil {
		return assembleSchema(plan, nil, true)
	}
	return assembleSchema(plan, func(_ int, r *planv1.FieldRule) bool { return shown(r) }, true)
}

// AssembleSchemaByIndex is AssembleSchema with shown asked about each rule
// by its index in plan.Rules as well.
func AssembleSchemaByIndex(plan *planv1.MessagePlan, shown func(i int, r *planv1.FieldRule) bool) ([]byte, error) {
	return assembleSchema(plan, shown, true)
}

// assembleSchema is AssembleSchema; placeRaw says whether canonical
// fragments are placed as their bytes (rawJSON) rather than decoded, which
// gives the same output (a test holds the two ways to each other).
func assembleSchema(plan *planv1.MessagePlan, shown func(int, *planv1.FieldRule) bool, placeRaw bool) ([]byte, error) {
	object := decodeObject
	if placeRaw {
		object = decodeOrPlace
	}
	shell, err := object(plan.GetSchema())
	if err != nil {
		return nil, fmt.Errorf("%s: schema shell: %w", plan.GetMessage(), err)
	}
	rules := plan.GetRules()
	root := &assemblyNode{target: shell}
	nodes := make(map[string]*assemblyNode, 4)
	nodes[""] = root
	var dropped map[string]bool
	var leaves rawValues
	if placeRaw {
		leaves = make(rawValues, 0, len(rules))
	}
	size := len(plan.GetSchema()) + len(SchemaDialect) + 32
	for i, rule := range rules {
		path := rule.GetPath()
		parentPath, name := "", path
		if i := strings.LastIndexByte(path, '.'); i >= 0 {
			parentPath, name = path[:i], path[i+1:]
		}
		parent, ok := nodes[parentPath]
		if !ok {
			if dropped[parentPath] {
				dropped[path] = true
				continue
			}
			return nil, fmt.Errorf("%s: rule %q comes before its parent or its parent has no children", plan.GetMessage(), path)
		}
		if shown != nil && !shown(i, rule) {
			if dropped == nil {
				dropped = map[string]bool{}
			}
			dropped[path] = true
			continue
		}
		// A leaf's fragment is placed whole and never changed: a canonical
		// one is placed as its bytes.
		var fragment map[string]any
		var placed any
		leaf := rule.GetContainer() == planv1.Container_CONTAINER_LEAF
		if leaf && placeRaw && isObjectText(rule.GetSchema()) && canonical(rule.GetSchema()) {
			placed = leaves.place(rule.GetSchema())
		} else {
			if fragment, err = object(rule.GetSchema()); err != nil {
				return nil, fmt.Errorf("%s: rule %q: %w", plan.GetMessage(), path, err)
			}
			placed = fragment
		}
		if parent.properties == nil {
			parent.properties = make(map[string]any, min(len(rules), 8))
		}
		if _, dup := parent.properties[name]; dup {
			return nil, fmt.Errorf("%s: rule %q appears twice", plan.GetMessage(), path)
		}
		size += len(name) + len(rule.GetSchema()) + 4
		parent.properties[name] = placed
		if rule.GetRequired() {
			parent.required = append(parent.required, name)
		}
		if leaf {
			continue
		}
		target, err := childTarget(fragment, rule.GetContainer())
		if err != nil {
			return nil, fmt.Errorf("%s: rule %q: %w", plan.GetMessage(), path, err)
		}
		node := &assemblyNode{target: target}
		nodes[path] = node
	}
	// An opaque root has no rules: its shell is its whole schema, and its
	// oneofs are not the plan's to prune.
	planned := len(rules) > 0
	for _, node := range nodes {
		if err := node.close(planned); err != nil {
			return nil, fmt.Errorf("%s: %w", plan.GetMessage(), err)
		}
	}
	shell["$schema"] = SchemaDialect
	return appendJSON(make([]byte, 0, size), shell)
}

// decodeOrPlace is decodeObject, except that a canonical object is decoded
// one level deep, its values kept as their bytes (shallowObject).
func decodeOrPlace(s string) (map[string]any, error) {
	if object, ok := shallowObject(s); ok {
		return object, nil
	}
	return decodeObject(s)
}

func isObjectText(s string) bool { return len(s) > 0 && s[0] == '{' }

// assemblyNode is an object schema receiving children: the shell, or a
// fragment's object (itself, its items or its additionalProperties).
type assemblyNode struct {
	target     map[string]any
	properties map[string]any
	required   []string
}

// close writes the node's children into its object and drops oneof
// constraints on members it was not given.
func (n *assemblyNode) close(prune bool) error {
	if n.properties != nil {
		n.target["properties"] = n.properties
	}
	if len(n.required) > 0 {
		required := make([]any, len(n.required))
		slices.Sort(n.required)
		for i, name := range n.required {
			required[i] = name
		}
		n.target["required"] = required
	}
	if prune {
		if err := expand(n.target, "allOf"); err != nil {
			return err
		}
		pruneOneofConstraints(n.target, func(name string) bool {
			_, ok := n.properties[name]
			return ok
		})
	}
	return nil
}

// pruneOneofConstraints rewrites the two constraint shapes oneofConstraints
// writes so they name only present members: an exclusion naming an absent
// member is vacuous and goes; a required alternative naming one goes, and a
// required oneof left with no alternative admits nothing. Anything else in
// allOf is kept.
func pruneOneofConstraints(object map[string]any, present func(string) bool) {
	all, ok := object["allOf"].([]any)
	if !ok {
		return
	}
	kept := all[:0:0]
	for _, entry := range all {
		e, ok := entry.(map[string]any)
		if !ok {
			kept = append(kept, entry)
			continue
		}
		if names, ok := exclusion(e); ok {
			if present(names[0]) && present(names[1]) {
				kept = append(kept, entry)
			}
			continue
		}
		if alternatives, ok := requiredAlternatives(e); ok {
			var left []any
			for i, name := range alternatives {
				if present(name) {
					left = append(left, e["anyOf"].([]any)[i])
				}
			}
			if len(left) == 0 {
				kept = append(kept, false)
			} else {
				kept = append(kept, map[string]any{"anyOf": left})
			}
			continue
		}
		kept = append(kept, entry)
	}
	if len(kept) == 0 {
		delete(object, "allOf")
		return
	}
	object["allOf"] = kept
}

// exclusion recognises {"not":{"required":[a,b]}}.
func exclusion(e map[string]any) ([2]string, bool) {
	if len(e) != 1 {
		return [2]string{}, false
	}
	not, ok := e["not"].(map[string]any)
	if !ok || len(not) != 1 {
		return [2]string{}, false
	}
	names := stringList(not["required"])
	if len(names) != 2 {
		return [2]string{}, false
	}
	return [2]string{names[0], names[1]}, true
}

// requiredAlternatives recognises {"anyOf":[{"required":[a]},…]}.
func requiredAlternatives(e map[string]any) ([]string, bool) {
	if len(e) != 1 {
		return nil, false
	}
	alternatives, ok := e["anyOf"].([]any)
	if !ok || len(alternatives) == 0 {
		return nil, false
	}
	names := make([]string, len(alternatives))
	for i, alt := range alternatives {
		a, ok := alt.(map[string]any)
		if !ok || len(a) != 1 {
			return nil, false
		}
		required := stringList(a["required"])
		if len(required) != 1 {
			return nil, false
		}
		names[i] = required[0]
	}
	return names, true
}

func stringList(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil
		}
		out[i] = s
	}
	return out
}

// childTarget is the object inside a fragment where its children go.
func childTarget(fragment map[string]any, container planv1.Container) (map[string]any, error) {
	var key string
	switch container {
	case planv1.Container_CONTAINER_MESSAGE:
		return fragment, nil
	case planv1.Container_CONTAINER_LIST_OF_MESSAGES:
		key = "items"
	case planv1.Container_CONTAINER_MAP_OF_MESSAGES:
		key = "additionalProperties"
	default:
		return nil, fmt.Errorf("container %v cannot hold children", container)
	}
	if err := expand(fragment, key); err != nil {
		return nil, err
	}
	target, ok := fragment[key].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a %v fragment has no %q object for its children", container, key)
	}
	return target, nil
}

func decodeObject(s string) (map[string]any, error) {
	v, err := decodeJSONString(s)
	if err != nil {
		return nil, err
	}
	object, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object: %.40s", s)
	}
	return object, nil
}
