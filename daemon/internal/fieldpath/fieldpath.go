package fieldpath

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/garm-dev/garm/daemon/internal/call"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Present reports whether any instance of the field at numbers below m is
// present (protoreflect's Has: a message field holding any message, even an
// empty one; a list or map with any entry; a scalar with presence that is
// present; a scalar without it that is not its zero value), descending
// through singular messages, every element of a list of messages and every
// value of a map of messages. The walk stops at the first instance found.
//
// A path that does not resolve in m's descriptors is an error whether or
// not data is present below it.
func Present(m protoreflect.Message, numbers []int32) (bool, error) {
	fd, err := Step(m.Descriptor(), numbers)
	if err != nil {
		return false, err
	}
	if len(numbers) == 1 {
		return m.Has(fd), nil
	}
	rest := numbers[1:]
	if !m.Has(fd) {
		return false, Resolvable(Child(fd), rest)
	}
	switch {
	case fd.IsList():
		list := m.Get(fd).List()
		for i := range list.Len() {
			if found, err := Present(list.Get(i).Message(), rest); found || err != nil {
				return found, err
			}
		}
		return false, nil
	case fd.IsMap():
		return presentInValues(m.Get(fd).Map(), rest)
	default:
		return Present(m.Get(fd).Message(), rest)
	}
}

// presentInValues is Present over every value of a map of messages. It is a
// function of its own so that only a walk through a map pays for the
// closure's captured results.
func presentInValues(values protoreflect.Map, rest []int32) (found bool, err error) {
	values.Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
		found, err = Present(v.Message(), rest)
		return !found && err == nil
	})
	return found && err == nil, err
}

// Step resolves the first number of a path in md and checks that, when the
// path goes on, the field holds messages to go on into: a singular message,
// a list of messages or a map whose values are messages.
func Step(md protoreflect.MessageDescriptor, numbers []int32) (protoreflect.FieldDescriptor, error) {
	if len(numbers) == 0 {
		return nil, errEmptyPath
	}
	fd := md.Fields().ByNumber(protoreflect.FieldNumber(numbers[0]))
	if fd == nil {
		return nil, fmt.Errorf("%s has no field %d", md.FullName(), numbers[0])
	}
	if len(numbers) > 1 && Child(fd) == nil {
		return nil, fmt.Errorf("%s holds no message for the path to go on into", fd.FullName())
	}
	return fd, nil
}

var errEmptyPath = errors.New("the rule has no field numbers")

// Resolvable checks a path in md without a message to walk: the rest of a
// path below a field no instance of which is present, so that a path that
// does not resolve fails whatever the message holds. An empty path
// resolves.
func Resolvable(md protoreflect.MessageDescriptor, numbers []int32) error {
	for len(numbers) > 0 {
		fd, err := Step(md, numbers)
		if err != nil {
			return err
		}
		md, numbers = Child(fd), numbers[1:]
	}
	return nil
}

// Child is the message a field's children belong to: its own, its
// elements' or its map values'; nil for a field of scalars.
func Child(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	if fd.IsMap() {
		return fd.MapValue().Message()
	}
	return fd.Message()
}

// RuleCompartments is rule i's compartment bits. Bits that are missing, or
// that do not number as many compartments as the rule names, were not
// numbered for this plan; they become every bit, which no caller covers, so
// a numbering mistake fails closed: the field is withheld instead of shown
// (redact) and unwritable instead of writable (input).
func RuleCompartments(ruleBits []call.Compartments, i int, rule *planv1.FieldRule) call.Compartments {
	if i < 0 || i >= len(ruleBits) || bits.OnesCount64(uint64(ruleBits[i])) != len(rule.GetCompartments()) {
		return ^call.Compartments(0)
	}
	return ruleBits[i]
}

// Readable is design 3.2's field visibility of rule i for a caller of shape:
// its read clearance allowed and its compartments covered, the compartment
// bits read as RuleCompartments reads them.
func Readable(shape call.Shape, ruleBits []call.Compartments, i int, rule *planv1.FieldRule) bool {
	return shape.Reaches(rule.GetRead(), RuleCompartments(ruleBits, i, rule))
}

// Writable is design 3.2's writability of rule i for a caller of shape: its
// write clearance allowed and its compartments covered, the compartment bits
// read as RuleCompartments reads them. The write check, the listed input
// schema and step 3b's violation filter all ask this one function.
func Writable(shape call.Shape, ruleBits []call.Compartments, i int, rule *planv1.FieldRule) bool {
	return shape.Reaches(rule.GetWrite(), RuleCompartments(ruleBits, i, rule))
}

// Shown reports whether rule i is in the input schema a caller of shape is
// listed (design 7.6): writable, and not supplied by the runner. Whether an
// ancestor hides it is the caller's to walk.
func Shown(shape call.Shape, ruleBits []call.Compartments, i int, rule *planv1.FieldRule) bool {
	return Writable(shape, ruleBits, i, rule) && !rule.GetRunnerSourced()
}

// Below reports whether numbers lies strictly below one of the rules'
// paths. Paths are compared by segment (field number), so a rule at
// "billing" does not hold "billing_summary" below it.
func Below(numbers []int32, rules []*planv1.FieldRule) bool {
	for _, r := range rules {
		parent := r.GetNumbers()
		if len(parent) < len(numbers) && slices.Equal(parent, numbers[:len(parent)]) {
			return true
		}
	}
	return false
}
