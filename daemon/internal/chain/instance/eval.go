package instance

import (
	"github.com/garm-dev/garm/daemon/internal/deny"
	celrule "github.com/garm-dev/garm/protoc-gen-garm/compile/instance"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Verdict is what one call's rules decided, for its ledger row: rule ids,
// counts and a class from a closed list — never a value, never CEL's text.
type Verdict struct {
	// Rule is the id of the rule that refused or withheld.
	Rule string
	// RowsFiltered is how many rows the filters removed.
	RowsFiltered uint32
	// FiltersApplied are the ids of the filters that removed a row, in
	// declaration order.
	FiltersApplied []string
	// AuditOnly are "<phase>:<id>" of each audit-only rule that would have
	// refused, withheld or removed a row, in evaluation order.
	AuditOnly []string
	// ErrorClass is the class of the first evaluation that failed rather
	// than returned false; "" when none did.
	ErrorClass string
}

func (v *Verdict) failed(class celrule.ErrorClass) {
	if class != celrule.ClassNone && v.ErrorClass == "" {
		v.ErrorClass = class.String()
	}
}

// CheckRequest is step 4: t's require rules over the caller and the request, in
// declaration order. The first enforced rule that does not hold exactly
// true refuses the call: 403 permission_denied naming the rule. It reads
// no stored data, so a record that is someone else's and one that does not
// exist are refused alike.
func (t *Tool) CheckRequest(view *celrule.View, request protoreflect.Message, v *Verdict) error {
	if t == nil || len(t.Require) == 0 {
		return nil
	}
	in := request.Interface()
	for i := range t.Require {
		r := &t.Require[i]
		holds, class := r.program.Eval(view, in, nil)
		if holds {
			continue
		}
		v.failed(class)
		if r.AuditOnly {
			v.AuditOnly = append(v.AuditOnly, "require:"+r.ID)
			continue
		}
		v.Rule = r.ID
		return deny.DenyRule(r.ID, "instance rule "+r.ID+" refused the request"+because(class))
	}
	return nil
}

// CheckAnswer is step 7 on the decoded answer, before redaction: t's reveal
// rules first — one that does not hold answers as the tool's own 404 —
// then its filters, in place.
func (t *Tool) CheckAnswer(view *celrule.View, request, answer protoreflect.Message, v *Verdict) error {
	if t == nil || len(t.Reveal)+len(t.Filter) == 0 {
		return nil
	}
	in := request.Interface()
	if len(t.Reveal) > 0 {
		out := answer.Interface()
		for i := range t.Reveal {
			r := &t.Reveal[i]
			holds, class := r.program.Eval(view, in, out)
			if holds {
				continue
			}
			v.failed(class)
			if r.AuditOnly {
				v.AuditOnly = append(v.AuditOnly, "reveal:"+r.ID)
				continue
			}
			v.Rule = r.ID
			// Byte for byte the tool's own not-found: the decision read
			// stored data, and any other answer would say the record exists.
			return deny.Refuse("404", "instance rule "+r.ID+" withheld the answer"+because(class))
		}
	}
	for i := range t.Filter {
		t.Filter[i].apply(view, in, answer, v)
	}
	return nil
}

// apply keeps the rows of f's field for which its rule holds exactly true,
// in order, and clears f's clear fields when it removed any. An audit-only
// filter keeps every row and records that it would have removed some.
func (f *Filter) apply(view *celrule.View, in proto.Message, answer protoreflect.Message, v *Verdict) {
	list, ok := listAt(answer, f.path)
	if !ok {
		return
	}
	kept, n, wouldRemove := 0, list.Len(), false
	for i := range n {
		row := list.Get(i)
		holds, class := f.program.Eval(view, in, row.Message().Interface())
		if !holds {
			v.failed(class)
			wouldRemove = true
			if !f.AuditOnly {
				continue
			}
		}
		if kept != i {
			list.Set(kept, row)
		}
		kept++
	}
	if !wouldRemove {
		return
	}
	if f.AuditOnly {
		v.AuditOnly = append(v.AuditOnly, "filter:"+f.ID)
		return
	}
	list.Truncate(kept)
	v.RowsFiltered += uint32(n - kept)
	v.FiltersApplied = append(v.FiltersApplied, f.ID)
	for _, path := range f.clear {
		clearAt(answer, path)
	}
}

// listAt is the list at path below m, mutable, when every message on the
// way is set and the list has rows; a list that is not there has nothing
// to filter.
func listAt(m protoreflect.Message, path []protoreflect.FieldDescriptor) (protoreflect.List, bool) {
	for _, fd := range path[:len(path)-1] {
		if !m.Has(fd) {
			return nil, false
		}
		m = m.Mutable(fd).Message()
	}
	last := path[len(path)-1]
	if !m.Has(last) {
		return nil, false
	}
	return m.Mutable(last).List(), true
}

// clearAt clears the field at path below m, when the messages on the way
// are set.
func clearAt(m protoreflect.Message, path []protoreflect.FieldDescriptor) {
	for _, fd := range path[:len(path)-1] {
		if !m.Has(fd) {
			return
		}
		m = m.Mutable(fd).Message()
	}
	m.Clear(path[len(path)-1])
}

// because is the ledger detail's words for a failed evaluation's class.
func because(class celrule.ErrorClass) string {
	if class == celrule.ClassNone {
		return ""
	}
	return " (evaluation failed: " + class.String() + ")"
}
