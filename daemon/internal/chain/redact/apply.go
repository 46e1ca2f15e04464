package redact

import (
	"fmt"

	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Result is what Apply did to one answer, for the ledger (design 3.7): counts
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

// Apply redacts resp, the answer of t, in place for a caller of shape whose
// tenant claim is tenant ("" when it has none): every instance of every
// field the shape may not read gets its rule's on_deny (design 7.7), across
// nested messages, every element of a list of messages and every value of a
// map of messages; and every unknown field anywhere in resp is dropped,
// since no rule says who may read it.
//
// A rule whose path does not resolve in resp's descriptors fails the call
// (the mount check makes that impossible; failing closed keeps it so). After
// an error resp is partly redacted and must not be sent.
func (r *Redactor) Apply(t *call.Tool, shape call.Shape, tenant string, resp protoreflect.Message) (Result, error) {
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
	keys := hashKeys{key: r.hashKey, tenant: tenant}
	for i, rule := range res.Denied {
		d := denial{arm: &res.arms[i], keys: &keys}
		changed, err := d.withhold(resp, rule.GetNumbers())
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

// denial is one denied rule being applied to one answer: its arm, and the
// call's hash keys.
type denial struct {
	arm  *arm
	keys *hashKeys
}

// withhold applies the rule to every instance of its field below m, numbers
// being what remains of the rule's path, and reports whether any instance
// changed.
func (d *denial) withhold(m protoreflect.Message, numbers []int32) (bool, error) {
	fd, err := fieldpath.Step(m.Descriptor(), numbers)
	if err != nil {
		return false, err
	}
	if len(numbers) == 1 {
		return d.withholdField(m, fd), nil
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
			c, err := d.withhold(list.Get(i).Message(), rest)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		return changed, nil
	case fd.IsMap():
		return d.withholdInValues(m.Get(fd).Map(), rest)
	default:
		return d.withhold(m.Get(fd).Message(), rest)
	}
}

// withholdInValues is withhold over every value of a map of messages.
func (d *denial) withholdInValues(values protoreflect.Map, rest []int32) (bool, error) {
	changed := false
	for _, e := range entries(values) {
		c, err := d.withhold(e.value.Message(), rest)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// entry is one key and value of a map.
type entry struct {
	key   protoreflect.MapKey
	value protoreflect.Value
}

// entries gathers a map's entries so that walking them takes no closure:
// a closure handed to Range escapes, and would take the denial, and with it
// the call's hash keys, to the heap on every call, not only on those whose
// answer holds a map.
func entries(values protoreflect.Map) []entry {
	out := make([]entry, 0, values.Len())
	values.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		out = append(out, entry{k, v})
		return true
	})
	return out
}

// withholdField applies the arm to one instance of the field and reports
// whether that changed anything. Where the arm cannot give a value — omit
// itself, a transform that fails, a field of a kind the transform does not
// apply to — the field is cleared.
func (d *denial) withholdField(m protoreflect.Message, fd protoreflect.FieldDescriptor) bool {
	if !m.Has(fd) {
		return false
	}
	if d.arm.kind != armOmit {
		if changed, ok := d.transformField(m, fd); ok {
			return changed
		}
	}
	m.Clear(fd)
	return true
}

// transformField transforms every value the present field fd of m holds.
// ok is false when the field must be omitted instead; m may then hold some
// values transformed, which the caller's clear removes with the rest.
//
// A list or map is all or nothing: one value the transform cannot give
// clears the whole field, since a list with a gap, or a map missing a key,
// would show where the odd value was. A map keeps its keys: a transform
// hides values, and a contract whose keys are secret uses omit.
func (d *denial) transformField(m protoreflect.Message, fd protoreflect.FieldDescriptor) (changed, ok bool) {
	switch {
	case fd.IsList():
		list := m.Mutable(fd).List()
		for i := range list.Len() {
			v, c, ok := d.transformValue(fd, list.Get(i))
			if !ok {
				return false, false
			}
			if c {
				list.Set(i, v)
				changed = true
			}
		}
		return changed, true
	case fd.IsMap():
		return d.transformValues(m.Mutable(fd).Map(), fd.MapValue())
	}
	v, changed, ok := d.transformValue(fd, m.Get(fd))
	if ok && changed {
		m.Set(fd, v)
	}
	return changed, ok
}

// transformValues is transformField over a map's values.
func (d *denial) transformValues(values protoreflect.Map, vd protoreflect.FieldDescriptor) (changed, ok bool) {
	for _, e := range entries(values) {
		v, c, ok := d.transformValue(vd, e.value)
		if !ok {
			return false, false
		}
		if c {
			values.Set(e.key, v)
			changed = true
		}
	}
	return changed, true
}

// transformValue is the arm over one value whose kind vd describes: a
// string for the string transforms, a Timestamp (changed in place) for
// date_grain. Every other kind, which lint L5 refuses at build time, omits.
func (d *denial) transformValue(vd protoreflect.FieldDescriptor, v protoreflect.Value) (out protoreflect.Value, changed, ok bool) {
	switch {
	case vd.Kind() == protoreflect.StringKind:
		in := v.String()
		s, ok := d.arm.transformString(in, d.keys)
		if !ok {
			return v, false, false
		}
		return protoreflect.ValueOfString(s), s != in, true
	case isTimestamp(vd):
		changed, ok := d.arm.transformTimestamp(v.Message())
		return v, changed, ok
	}
	return v, false, false
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
