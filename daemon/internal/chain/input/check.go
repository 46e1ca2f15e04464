package input

import (
	"errors"
	"fmt"
	"github.com/garm-dev/garm/daemon/internal/cache"
	"math/bits"
	"slices"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Checker is step 3a: it refuses a request that sets a field its caller may
// not write. It is safe for concurrent use; its cache is shared by every
// call.
type Checker struct {
	cache *cache.Map[shapeKey, *writePlan]
}

// NewChecker is a Checker that keeps at most cacheSize resolutions; a
// cacheSize of zero or less caches nothing and resolves on every call.
func NewChecker(cacheSize int) *Checker {
	return &Checker{cache: cache.New[shapeKey, *writePlan](cacheSize)}
}

// writePlan is what one caller shape may not set of one input plan.
type writePlan struct {
	// unwritable are the rules the shape may not write, in plan order, with
	// every rule below one of them left out: a field below an unset field is
	// unset too, and a set one is refused already.
	unwritable []*planv1.FieldRule
	// runner are the runner-sourced rules the shape may write, which need
	// an exec claim too.
	runner []*planv1.FieldRule
}

// CheckWrites refuses req, a request to t, when it sets a field p may not
// write (SPEC 3.2: allows(clearance, write) and covers the field's
// compartments), wherever the field is: at the top, in any element of a list
// of messages or in any value of a map of messages. Set means present: a
// message field holding any message (even an empty one), a list or map with
// any entry, a scalar with presence that is present, a scalar without it
// that is not its zero value. The request is never stripped: a field is
// either allowed or the call is refused.
//
// A runner-sourced field is refused unless p carries an exec claim; when it
// is set and allowed, its value is returned as the invocation's idempotency
// key. Only a singular top-level string can be runner-sourced (lint L34), so
// anything else, or more than one such field set, fails the call as ours.
//
// Refusals are *deny.Denied with PermissionDenied and a detail naming the
// field's path, never its value. Any other error means the plan and the
// request do not fit each other (the catalogue check should make that
// impossible) and fails the call.
func (c *Checker) CheckWrites(p *call.Principal, t *call.Tool, req protoreflect.Message) (idempotencyKey string, err error) {
	plan := t.InputPlan
	switch {
	case plan == nil:
		return "", fmt.Errorf("input: %s has no input plan", t.FQN)
	case req == nil || !req.IsValid():
		return "", fmt.Errorf("input: %s: no request to check", t.FQN)
	case string(req.Descriptor().FullName()) != plan.GetMessage():
		return "", fmt.Errorf("input: %s was sent %s, its plan is for %s", t.FQN, req.Descriptor().FullName(), plan.GetMessage())
	}
	wp := c.resolve(plan, t.InputRuleCompartments, p.Shape())
	for _, rule := range wp.unwritable {
		set, err := anySet(req, rule.GetNumbers())
		if err != nil {
			return "", fmt.Errorf("input: %s: rule %q: %w", t.FQN, rule.GetPath(), err)
		}
		if set {
			return "", deny.Deny(deny.PermissionDenied, rule.GetPath()+" is not writable by this caller")
		}
	}
	var keyRule *planv1.FieldRule
	for _, rule := range wp.runner {
		set, err := anySet(req, rule.GetNumbers())
		if err != nil {
			return "", fmt.Errorf("input: %s: rule %q: %w", t.FQN, rule.GetPath(), err)
		}
		if !set {
			continue
		}
		if p.ExecutionSubject == "" {
			return "", deny.Deny(deny.PermissionDenied, rule.GetPath()+" is supplied by the runner and the caller carries no exec claim")
		}
		if keyRule != nil {
			return "", fmt.Errorf("input: %s: runner-sourced fields %q and %q are both set; only one idempotency key can be forwarded", t.FQN, keyRule.GetPath(), rule.GetPath())
		}
		keyRule = rule
	}
	if keyRule == nil {
		return "", nil
	}
	return runnerKey(t, req, keyRule)
}

// runnerKey is the value of a runner-sourced field that is set, which must
// be a singular string at the top of the request.
func runnerKey(t *call.Tool, req protoreflect.Message, rule *planv1.FieldRule) (string, error) {
	numbers := rule.GetNumbers()
	if len(numbers) != 1 {
		return "", fmt.Errorf("input: %s: runner-sourced %q is not at the top of the request", t.FQN, rule.GetPath())
	}
	fd := req.Descriptor().Fields().ByNumber(protoreflect.FieldNumber(numbers[0]))
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.Cardinality() == protoreflect.Repeated {
		return "", fmt.Errorf("input: %s: runner-sourced %q is not a singular string", t.FQN, rule.GetPath())
	}
	return req.Get(fd).String(), nil
}

func (c *Checker) resolve(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *writePlan {
	key := shapeKey{plan: plan, shape: shape}
	if wp, ok := c.cache.Get(key); ok {
		return wp
	}
	return c.cache.Put(key, resolve(plan, ruleBits, shape))
}

// resolve is the cache's miss path. Plans list parents before children
// (SPEC 3.5), so a rule's unwritable ancestor is always met first.
func resolve(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *writePlan {
	wp := &writePlan{}
	for i, rule := range plan.GetRules() {
		if belowAny(rule.GetNumbers(), wp.unwritable) {
			continue
		}
		switch {
		case !writable(shape, rule, ruleCompartments(ruleBits, i, rule)):
			wp.unwritable = append(wp.unwritable, rule)
		case rule.GetRunnerSourced():
			wp.runner = append(wp.runner, rule)
		}
	}
	return wp
}

// writable is SPEC 3.2's field writability.
func writable(shape call.Shape, rule *planv1.FieldRule, need call.Compartments) bool {
	return call.Allows(shape.Clearance, rule.GetWrite()) && shape.Compartments.Covers(need)
}

// ruleCompartments is rule i's compartment bits. Bits that are missing, or
// that do not number as many compartments as the rule names, were not
// numbered for this plan; they become every bit, which no caller covers, so
// a numbering mistake makes the field unwritable instead of writable.
func ruleCompartments(ruleBits []call.Compartments, i int, rule *planv1.FieldRule) call.Compartments {
	if i >= len(ruleBits) || bits.OnesCount64(uint64(ruleBits[i])) != len(rule.GetCompartments()) {
		return ^call.Compartments(0)
	}
	return ruleBits[i]
}

// belowAny reports whether numbers lies strictly below one of the rules'
// paths, compared by segment (field number).
func belowAny(numbers []int32, rules []*planv1.FieldRule) bool {
	for _, r := range rules {
		parent := r.GetNumbers()
		if len(parent) < len(numbers) && slices.Equal(parent, numbers[:len(parent)]) {
			return true
		}
	}
	return false
}

// anySet reports whether any instance of the field at numbers below m is
// set, descending through singular messages, every element of a list of
// messages and every value of a map of messages.
func anySet(m protoreflect.Message, numbers []int32) (bool, error) {
	fd, err := step(m.Descriptor(), numbers)
	if err != nil {
		return false, err
	}
	if len(numbers) == 1 {
		return m.Has(fd), nil
	}
	rest := numbers[1:]
	if !m.Has(fd) {
		return false, resolvable(childMessage(fd), rest)
	}
	switch {
	case fd.IsList():
		list := m.Get(fd).List()
		for i := range list.Len() {
			if set, err := anySet(list.Get(i).Message(), rest); set || err != nil {
				return set, err
			}
		}
		return false, nil
	case fd.IsMap():
		return anySetInValues(m.Get(fd).Map(), rest)
	default:
		return anySet(m.Get(fd).Message(), rest)
	}
}

// anySetInValues is anySet over every value of a map of messages. It is a
// function of its own so that only a walk through a map pays for the
// closure's captured results.
func anySetInValues(values protoreflect.Map, rest []int32) (set bool, err error) {
	values.Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
		set, err = anySet(v.Message(), rest)
		return !set && err == nil
	})
	return set && err == nil, err
}

// step resolves the first number of a path in md and checks that, when the
// path goes on, the field holds messages to go on into.
func step(md protoreflect.MessageDescriptor, numbers []int32) (protoreflect.FieldDescriptor, error) {
	if len(numbers) == 0 {
		return nil, errEmptyPath
	}
	fd := md.Fields().ByNumber(protoreflect.FieldNumber(numbers[0]))
	if fd == nil {
		return nil, fmt.Errorf("%s has no field %d", md.FullName(), numbers[0])
	}
	if len(numbers) > 1 && childMessage(fd) == nil {
		return nil, fmt.Errorf("%s holds no message for the path to go on into", fd.FullName())
	}
	return fd, nil
}

var errEmptyPath = errors.New("the rule has no field numbers")

// resolvable checks the rest of a path below a field that is not set, so
// that a path that does not resolve fails whatever the request holds.
func resolvable(md protoreflect.MessageDescriptor, numbers []int32) error {
	for len(numbers) > 0 {
		fd, err := step(md, numbers)
		if err != nil {
			return err
		}
		md, numbers = childMessage(fd), numbers[1:]
	}
	return nil
}

// childMessage is the message a field's children belong to: its own, its
// elements' or its map values'; nil for a field of scalars.
func childMessage(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	if fd.IsMap() {
		return fd.MapValue().Message()
	}
	return fd.Message()
}
