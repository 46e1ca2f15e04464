package compile

import (
	"fmt"
	"slices"
	"strings"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ResolveRule finds the field a plan rule describes below root, walking its
// path by name and by number together. It fails when the two disagree, when
// a step leaves the plan's tree (a leaf with children, an opaque message),
// or when the rule's container is not what the field is — so a plan and the
// descriptors it is read with are known to describe the same message, field
// for field, before anything is decided with them.
func ResolveRule(root protoreflect.MessageDescriptor, rule *planv1.FieldRule) (protoreflect.FieldDescriptor, error) {
	names := strings.Split(rule.GetPath(), ".")
	numbers := rule.GetNumbers()
	if rule.GetPath() == "" || len(names) != len(numbers) {
		return nil, fmt.Errorf("%s: rule %q has %d names and %d numbers", root.FullName(), rule.GetPath(), len(names), len(numbers))
	}
	md := root
	var fd protoreflect.FieldDescriptor
	for i, name := range names {
		if md == nil {
			return nil, fmt.Errorf("%s: rule %q descends below %s, which has no fields in a plan", root.FullName(), rule.GetPath(), fd.FullName())
		}
		fd = md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			return nil, fmt.Errorf("%s: rule %q: %s has no field %q", root.FullName(), rule.GetPath(), md.FullName(), name)
		}
		if int32(fd.Number()) != numbers[i] {
			return nil, fmt.Errorf("%s: rule %q: %s is field %d, the rule says %d", root.FullName(), rule.GetPath(), fd.FullName(), fd.Number(), numbers[i])
		}
		md = ChildMessage(fd)
	}
	if got := ContainerOf(fd); got != rule.GetContainer() {
		return nil, fmt.Errorf("%s: rule %q: %s is a %s, the rule says %s", root.FullName(), rule.GetPath(), fd.FullName(), got, rule.GetContainer())
	}
	return fd, nil
}

// CheckPlan verifies that a message plan describes root exactly: it names
// root, every rule resolves (ResolveRule), and every field reachable from
// root has exactly one rule, in the plan's order (depth-first, parents before
// children, field-number order). A plan that covers less than its message
// would leave a field with no decision, so that is refused too.
func CheckPlan(root protoreflect.MessageDescriptor, plan *planv1.MessagePlan) error {
	if plan.GetMessage() != string(root.FullName()) {
		return fmt.Errorf("plan for %q checked against %s", plan.GetMessage(), root.FullName())
	}
	if IsOpaque(root) {
		if len(plan.GetRules()) > 0 {
			return fmt.Errorf("%s: an opaque message has no field rules, the plan has %d", root.FullName(), len(plan.GetRules()))
		}
		return nil
	}
	if planMatches(root, plan.GetRules()) {
		return nil
	}
	// Something differs: find and name the first difference.
	var want []string
	var walk func(md protoreflect.MessageDescriptor, prefix string, depth int) error
	walk = func(md protoreflect.MessageDescriptor, prefix string, depth int) error {
		if depth > maxPlanDepth {
			return fmt.Errorf("%s: deeper than %d fields; a plan is flat, so a recursive message cannot have one", root.FullName(), maxPlanDepth)
		}
		for _, fd := range fieldsByNumber(md) {
			want = append(want, prefix+string(fd.Name()))
			if child := ChildMessage(fd); child != nil {
				if err := walk(child, prefix+string(fd.Name())+".", depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, "", 0); err != nil {
		return err
	}
	rules := plan.GetRules()
	for i, rule := range rules {
		if _, err := ResolveRule(root, rule); err != nil {
			return err
		}
		if i >= len(want) || rule.GetPath() != want[i] {
			return fmt.Errorf("%s: rule %d is %q, the message's field %d in plan order is %s", root.FullName(), i, rule.GetPath(), i, describeWant(want, i))
		}
	}
	if len(rules) < len(want) {
		return fmt.Errorf("%s: the plan has no rule for %q", root.FullName(), want[len(rules)])
	}
	return nil
}

// planMatches reports, in one walk and without building paths, whether
// rules are exactly root's fields in plan order, each with its path, its
// field numbers and its container: the plans CheckPlan accepts. Every
// artifact read checks every plan, so the common case is made cheap and
// the naming of a difference is left to CheckPlan's own walk.
func planMatches(root protoreflect.MessageDescriptor, rules []*planv1.FieldRule) bool {
	next := 0
	var numbers []int32
	var walk func(md protoreflect.MessageDescriptor, prefix string, depth int) bool
	walk = func(md protoreflect.MessageDescriptor, prefix string, depth int) bool {
		if depth > maxPlanDepth {
			return false
		}
		for _, fd := range fieldsByNumber(md) {
			if next >= len(rules) {
				return false
			}
			rule := rules[next]
			next++
			name, path := string(fd.Name()), rule.GetPath()
			numbers = append(numbers[:depth], int32(fd.Number()))
			if len(path) != len(prefix)+len(name) || path[:len(prefix)] != prefix || path[len(prefix):] != name ||
				!slices.Equal(rule.GetNumbers(), numbers) || rule.GetContainer() != ContainerOf(fd) {
				return false
			}
			if child := ChildMessage(fd); child != nil && !walk(child, path+".", depth+1) {
				return false
			}
		}
		return true
	}
	return walk(root, "", 0) && next == len(rules)
}

// maxPlanDepth bounds the walk of a message whose plan is being checked; a
// real plan is far shallower, and lint refuses recursion outright.
const maxPlanDepth = 64

func describeWant(want []string, i int) string {
	if i < len(want) {
		return fmt.Sprintf("%q", want[i])
	}
	return "past its last field"
}
