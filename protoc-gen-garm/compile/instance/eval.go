package instance

import (
	"strings"
	"sync"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"
	"google.golang.org/protobuf/proto"
)

// ErrorClass is why an evaluation failed, from a closed list; its String is
// the ledger's spelling. The zero value means it did not fail.
type ErrorClass uint8

const (
	ClassNone ErrorClass = iota
	// ClassAbsentAttribute: the rule read a variable the view does not
	// bind (an absent attribute, a missing tenant, an agent of a direct call).
	ClassAbsentAttribute
	// ClassNoSuchKey: a map lookup of a key that is not there.
	ClassNoSuchKey
	// ClassOverflow: integer arithmetic left the int64 or uint64 range.
	ClassOverflow
	// ClassDivisionByZero: a division or modulus by zero.
	ClassDivisionByZero
	// ClassNotBool: the rule returned something other than a bool.
	ClassNotBool
	// ClassOther: any other failure (the runtime cost limit among them).
	ClassOther
)

var classNames = [...]string{"", "absent_attribute", "no_such_key", "overflow", "division_by_zero", "not_bool", "other"}

// String is the class's name on the ledger, "" for ClassNone.
func (c ErrorClass) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "other"
}

// Classes is every class a failed evaluation can report, for tests and
// schemas.
func Classes() []ErrorClass {
	return []ErrorClass{ClassAbsentAttribute, ClassNoSuchKey, ClassOverflow, ClassDivisionByZero, ClassNotBool, ClassOther}
}

// classify maps CEL's error to a class by its kind: the messages CEL builds
// for each kind begin with fixed words; the rest of the text, which can quote
// values, is dropped here and never returned.
func classify(err error) ErrorClass {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "no such attribute"):
		return ClassAbsentAttribute
	case strings.HasPrefix(msg, "no such key"):
		return ClassNoSuchKey
	case strings.Contains(msg, "overflow"):
		return ClassOverflow
	case msg == "division by zero" || msg == "modulus by zero":
		return ClassDivisionByZero
	}
	return ClassOther
}

// activation resolves the rule's variables from a view and the call's
// messages, with no map built per call. The messages are handed to CEL as
// they are, never boxed as CEL objects: CEL's field qualifiers read a
// proto.Message directly, so a rule that selects request.x costs only the
// field's value, and CEL boxes a whole message itself in the rare rule that
// uses it whole. Activations are pooled.
type activation struct {
	view            *View
	request, answer proto.Message
	answerName      string
}

var activations = sync.Pool{New: func() any { return new(activation) }}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case "request":
		return a.request, a.request != nil
	case a.answerName:
		return a.answer, a.answer != nil
	}
	return a.view.resolve(name)
}

func (a *activation) Parent() interpreter.Activation { return nil }

// Eval runs the rule for the principal of view on request and, for reveal
// and filter rules, answer (the response, or one row). It holds only when
// the rule returned exactly true; when the evaluation failed, class says why.
// request and answer must be messages of the descriptors p was compiled
// against.
func (p *Program) Eval(view *View, request, answer proto.Message) (holds bool, class ErrorClass) {
	act := activations.Get().(*activation)
	*act = activation{view: view, request: request, answerName: p.answer}
	if p.answer != "" {
		act.answer = answer
	}
	out, _, err := p.prg.Eval(act)
	*act = activation{}
	activations.Put(act)
	if err != nil {
		return false, classify(err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		if types.IsError(out) {
			return false, ClassOther
		}
		return false, ClassNotBool
	}
	return bool(b), ClassNone
}
