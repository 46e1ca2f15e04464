package redact

import (
	"fmt"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Result is what Apply did to one answer, for the ledger (SPEC 3.7): counts
// and a content address, never a value.
type Result struct {
	// Count is redaction_count: the denied rules that changed something in
	// this answer, each counted once however many instances it changed.
	Count uint32
	// Disclosed is disclosed_count: the audit_on_read rules the caller may
	// read of which this answer, after redaction, carries at least one
	// instance, each counted once.
	Disclosed uint32
	// Plan is redaction_plan, the resolution's content address: what this
	// caller's shape has withheld from this tool's answers, whether or not
	// this answer carried any of it.
	Plan string
}

// Apply redacts resp, the answer of t, in place for a caller of shape: every
// instance of every field the shape may not read is withheld, across nested
// messages, every element of a list of messages and every value of a map of
// messages; and every unknown field anywhere in resp is dropped, since no
// rule says who may read it.
//
// A rule whose path does not resolve in resp's descriptors fails the call
// (the mount check makes that impossible; failing closed keeps it so). After
// an error resp is partly redacted and must not be sent.
func (r *Redactor) Apply(t *call.Tool, shape call.Shape, resp protoreflect.Message) (Result, error) {
	plan := t.OutputPlan
	switch {
	case plan == nil:
		return Result{}, fmt.Errorf("redact: %s has no output plan", t.FQN)
	case resp == nil || !resp.IsValid():
		return Result{}, fmt.Errorf("redact: %s: no answer to redact", t.FQN)
	case string(resp.Descriptor().FullName()) != plan.GetMessage():
		return Result{}, fmt.Errorf("redact: %s answered %s, its plan is for %s", t.FQN, resp.Descriptor().FullName(), plan.GetMessage())
	}
	res := r.Resolve(plan, t.OutputRuleCompartments, shape)
	out := Result{Plan: res.Plan}
	for _, rule := range res.Denied {
		changed, err := withhold(resp, rule, rule.GetNumbers())
		if err != nil {
			return Result{}, fmt.Errorf("redact: %s: rule %q: %w", t.FQN, rule.GetPath(), err)
		}
		if changed {
			out.Count++
		}
	}
	for _, rule := range res.Audited {
		carried, err := fieldpath.Present(resp, rule.GetNumbers())
		if err != nil {
			return Result{}, fmt.Errorf("redact: %s: rule %q: %w", t.FQN, rule.GetPath(), err)
		}
		if carried {
			out.Disclosed++
		}
	}
	dropUnknown(resp)
	return out, nil
}

// withholdField applies a denied rule to one instance of its field and
// reports whether that changed anything. Every denied field is omitted,
// whatever its on_deny: SPEC 7.7 omits whenever a transform fails, so
// omission never shows what a transform would have hidden.
func withholdField(m protoreflect.Message, fd protoreflect.FieldDescriptor, _ *planv1.FieldRule) bool {
	if !m.Has(fd) {
		return false
	}
	m.Clear(fd)
	return true
}

// withhold applies rule to every instance of its field below m, numbers
// being what remains of the rule's path, and reports whether any instance
// changed.
func withhold(m protoreflect.Message, rule *planv1.FieldRule, numbers []int32) (bool, error) {
	fd, err := fieldpath.Step(m.Descriptor(), numbers)
	if err != nil {
		return false, err
	}
	if len(numbers) == 1 {
		return withholdField(m, fd, rule), nil
	}
	rest := numbers[1:]
	if !m.Has(fd) {
		return false, fieldpath.Resolvable(fieldpath.Child(fd), rest)
	}
	switch {
	case fd.IsList():
		changed := false
		list := m.Get(fd).List()
		for i := range list.Len() {
			c, err := withhold(list.Get(i).Message(), rule, rest)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		return changed, nil
	case fd.IsMap():
		return withholdInValues(m.Get(fd).Map(), rule, rest)
	default:
		return withhold(m.Get(fd).Message(), rule, rest)
	}
}

// withholdInValues is withhold over every value of a map of messages. It is
// a function of its own so that only a walk through a map pays for the
// closure's captured results.
func withholdInValues(values protoreflect.Map, rule *planv1.FieldRule, rest []int32) (changed bool, err error) {
	values.Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
		var c bool
		c, err = withhold(v.Message(), rule, rest)
		changed = changed || c
		return err == nil
	})
	return changed && err == nil, err
}

// dropUnknown removes unknown fields from m and every message below it.
func dropUnknown(m protoreflect.Message) {
	if len(m.GetUnknown()) > 0 {
		m.SetUnknown(nil)
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fieldpath.Child(fd) == nil || !m.Has(fd) {
			continue
		}
		switch {
		case fd.IsList():
			list := m.Get(fd).List()
			for j := range list.Len() {
				dropUnknown(list.Get(j).Message())
			}
		case fd.IsMap():
			m.Get(fd).Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool {
				dropUnknown(v.Message())
				return true
			})
		default:
			dropUnknown(m.Get(fd).Message())
		}
	}
}
