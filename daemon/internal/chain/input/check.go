package input

import (
	"fmt"

	"github.com/garm-dev/garm/daemon/internal/cache"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Checker is step 3: it refuses a request that sets a field its caller may
// not write (3a, CheckWrites) and one that breaks its own rules (3b,
// Validate). It is safe for concurrent use; its caches are shared by every
// call.
type Checker struct {
	cache *cache.Map[shapeKey, *writePlan]
	// shown is the input schema each (plan, shape) was listed, for 3b.
	shown *cache.Map[shapeKey, *shownSet]
	// reads is what each CEL or message rule reads, so that no expression
	// is parsed twice.
	reads *cache.Map[ruleKey, *ruleReads]
}

// NewChecker is a Checker whose caches each keep at most cacheSize entries;
// a cacheSize of zero or less caches nothing and resolves on every call.
func NewChecker(cacheSize int) *Checker {
	return &Checker{
		cache: cache.New[shapeKey, *writePlan](cacheSize),
		shown: cache.New[shapeKey, *shownSet](cacheSize),
		reads: cache.New[ruleKey, *ruleReads](cacheSize),
	}
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
// write (design 3.2: allows(clearance, write) and covers the field's
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
		set, err := fieldpath.Present(req, rule.GetNumbers())
		if err != nil {
			return "", fmt.Errorf("input: %s: rule %q: %w", t.FQN, rule.GetPath(), err)
		}
		if set {
			return "", deny.Deny(deny.PermissionDenied, rule.GetPath()+" is not writable by this caller")
		}
	}
	var keyRule *planv1.FieldRule
	for _, rule := range wp.runner {
		set, err := fieldpath.Present(req, rule.GetNumbers())
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
// (design 3.5), so a rule's unwritable ancestor is always met first.
func resolve(plan *planv1.MessagePlan, ruleBits []call.Compartments, shape call.Shape) *writePlan {
	wp := &writePlan{}
	for i, rule := range plan.GetRules() {
		if fieldpath.Below(rule.GetNumbers(), wp.unwritable) {
			continue
		}
		switch {
		case !fieldpath.Writable(shape, ruleBits, i, rule):
			wp.unwritable = append(wp.unwritable, rule)
		case rule.GetRunnerSourced():
			wp.runner = append(wp.runner, rule)
		}
	}
	return wp
}
