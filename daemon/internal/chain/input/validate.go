package input

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"github.com/garm-dev/garm/daemon/internal/call"
	"github.com/garm-dev/garm/daemon/internal/deny"
	"github.com/garm-dev/garm/daemon/internal/fieldpath"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Violation is one broken rule as the caller is told it (design 7.3, the
// "violations" key of a 400): where, which rule, and the rule's message
// unless it would quote the request.
type Violation struct {
	// Field is the path from the request's root: dotted proto field names,
	// list indexes as [i], every map key as [*]; "" for the root itself.
	Field string `json:"field"`
	// Rule is protovalidate's rule id.
	Rule string `json:"rule"`
	// Message is the rule's message, or "" when it would quote a value of
	// the request.
	Message string `json:"message"`
}

// MaxListed is the most violations one refusal lists: a request of many
// elements can break one rule in each, and the answer must not grow with
// it. The first MaxListed listed ones are kept, in protovalidate's order.
const MaxListed = 100

// Validate is step 3b: it runs v (the generation's protovalidate validator,
// built once per generation by the catalogue, compiled eagerly) over req,
// the decoded request to t.
//
// A valid request is nil. Broken rules are a *deny.Denied (InvalidArgument)
// whose Detail, for the ledger only, holds every violation — path, rule id
// and message — and whose Extra["violations"] is a []Violation, never nil,
// listing only what shape was shown (design 7.4 3b, 7.6), at most MaxListed: a violation on a
// field in its input schema; a CEL rule only when every field it reads is
// in it; a oneof or message-oneof rule only when every field it concerns
// is. What cannot be placed in the schema is not listed. Any other failure
// of protovalidate is an error of garmd's, which quotes nothing of the
// request.
func (c *Checker) Validate(v protovalidate.Validator, t *call.Tool, shape call.Shape, req protoreflect.Message) error {
	plan := t.InputPlan
	switch {
	case v == nil:
		return fmt.Errorf("input: %s: no validator", t.FQN)
	case plan == nil:
		return fmt.Errorf("input: %s has no input plan", t.FQN)
	case req == nil || !req.IsValid():
		return fmt.Errorf("input: %s: no request to validate", t.FQN)
	case string(req.Descriptor().FullName()) != plan.GetMessage():
		return fmt.Errorf("input: %s was sent %s, its plan is for %s", t.FQN, req.Descriptor().FullName(), plan.GetMessage())
	}
	err := v.Validate(req.Interface())
	if err == nil {
		return nil
	}
	var broken *protovalidate.ValidationError
	if !errors.As(err, &broken) {
		return validatorFailure(t, err)
	}
	shown := c.shownFor(plan, t.InputRuleCompartments, shape)
	listed := make([]Violation, 0, len(broken.Violations))
	var detail strings.Builder
	var values *requestValues
	for i, pv := range broken.Violations {
		at := locate(req.Descriptor(), pv.Proto.GetField().GetElements())
		show := at.resolved && c.shows(shown, at, pv)
		writeDetail(&detail, i, at.field, pv, show)
		if !show {
			continue
		}
		message := pv.Proto.GetMessage()
		if message != "" {
			if values == nil {
				values = collectValues(req)
			}
			if values.quotedIn(message) {
				message = ""
			}
		}
		if len(listed) < MaxListed {
			listed = append(listed, Violation{Field: at.field, Rule: pv.Proto.GetRuleId(), Message: message})
		}
	}
	if len(broken.Violations) == 0 {
		detail.WriteString("protovalidate reported a validation error without violations")
	}
	return &deny.Denied{Code: deny.InvalidArgument, Detail: detail.String(), Extra: map[string]any{"violations": listed}}
}

// validatorFailure is a protovalidate error that is not a verdict. A
// compilation error names rules and descriptors only, so it is kept. A
// runtime error's text is CEL's, which quotes values freely ("no such key:
// <the key>"), so only its kind is kept.
func validatorFailure(t *call.Tool, err error) error {
	if compile := (*protovalidate.CompilationError)(nil); errors.As(err, &compile) {
		return fmt.Errorf("input: %s: the validation rules do not compile: %w", t.FQN, err)
	}
	if runtime := (*protovalidate.RuntimeError)(nil); errors.As(err, &runtime) {
		return fmt.Errorf("input: %s: a validation rule failed to evaluate (its error is withheld: it may quote the request)", t.FQN)
	}
	return fmt.Errorf("input: %s: validation failed with a %T (its error is withheld: it may quote the request)", t.FQN, err)
}

// writeDetail adds one violation to the ledger's detail: every violation,
// listed or not, with its message, since the ledger is where an operator
// finds out why a call was refused. Paths render as for the caller, so no
// map key reaches the ledger through a path either.
func writeDetail(b *strings.Builder, i int, field string, pv *protovalidate.Violation, listed bool) {
	if i > 0 {
		b.WriteString("; ")
	}
	if field == "" {
		field = "(request)"
	}
	b.WriteString(field)
	b.WriteString(": [")
	b.WriteString(pv.Proto.GetRuleId())
	b.WriteString("] ")
	b.WriteString(pv.Proto.GetMessage())
	if !listed {
		b.WriteString(" (not listed to the caller)")
	}
}

// location is where a violation's field path leads in the request's
// descriptors.
type location struct {
	// field is the path as the caller sees it.
	field string
	// names are the field names from the root, indexes and keys stripped:
	// the plan's spelling.
	names []string
	// fd is the last field on the path; nil at the root or on a oneof.
	fd protoreflect.FieldDescriptor
	// od is the oneof the path ends on, for a oneof rule.
	od protoreflect.OneofDescriptor
	// msg is the message the path reaches: the root for an empty path, the
	// message (or element, or map value) the last field holds; nil when
	// the last field holds no message or the path ends on a oneof.
	msg protoreflect.MessageDescriptor
	// resolved is false when the path does not resolve in the descriptors:
	// such a violation is not listed.
	resolved bool
}

// locate walks a violation's field path from the root. Fields are found by
// number and must carry the name protovalidate gave them; only the last
// element may lack a number, and then it names a oneof.
func locate(root protoreflect.MessageDescriptor, elements []*validate.FieldPathElement) location {
	at := location{resolved: true}
	var b strings.Builder
	md := root
	for i, el := range elements {
		name := el.GetFieldName()
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(name)
		switch el.WhichSubscript() {
		case validate.FieldPathElement_Subscript_not_set_case:
		case validate.FieldPathElement_Index_case:
			b.WriteByte('[')
			b.WriteString(strconv.FormatUint(el.GetIndex(), 10))
			b.WriteByte(']')
		default:
			b.WriteString("[*]")
		}
		at.names = append(at.names, name)
		if !at.resolved {
			continue
		}
		if md == nil {
			at.resolved = false
			continue
		}
		if !el.HasFieldNumber() {
			at.od = md.Oneofs().ByName(protoreflect.Name(name))
			at.resolved = at.od != nil && i == len(elements)-1
			md = nil
			continue
		}
		at.fd = md.Fields().ByNumber(protoreflect.FieldNumber(el.GetFieldNumber()))
		if at.fd == nil || string(at.fd.Name()) != name {
			at.resolved = false
			continue
		}
		md = fieldpath.Child(at.fd)
	}
	at.field = b.String()
	if at.resolved {
		at.msg = md
	}
	return at
}

// shows decides whether a located violation is listed to a caller who was
// shown the fields in shown.
func (c *Checker) shows(shown *shownSet, at location, pv *protovalidate.Violation) bool {
	rulePath := pv.Proto.GetRule().GetElements()
	if at.od != nil {
		// A oneof rule: the path names the oneof; the message holding it
		// must be shown, and so must each member.
		base := at.names[:len(at.names)-1]
		return shown.reaches(base, false) && shown.covers(base, oneofReads(at.od))
	}
	if !shown.reaches(at.names, false) {
		return false
	}
	if len(rulePath) == 0 {
		// A message rule (CEL or message oneof) on the message the path
		// reaches: the root, or the message the last field holds.
		if at.msg == nil {
			return false
		}
		return shown.covers(at.names, c.messageReads(at.msg, pv.Proto.GetRuleId()))
	}
	if at.fd == nil {
		return false
	}
	return shown.covers(at.names, c.fieldReads(at.fd, rulePath, pv.RuleDescriptor))
}
