package input

import (
	"strconv"
	"strings"
	"sync"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ruleReads is what one rule reads, relative to the message or field it is
// on. A violation of the rule is listed only when the caller was shown all
// of it (design 7.4 3b): otherwise the verdict would tell the caller
// something about a field it was not shown.
type ruleReads struct {
	// everything: the rule could not be analysed, so it may read any field
	// of the input.
	everything bool
	paths      []readPath
}

// readPath is one path a rule reads below its base. No names is the base
// itself; subtree means the value at the path was used whole (compared,
// passed to a function, ranged over), not only selected through.
type readPath struct {
	names   []string
	subtree bool
}

var (
	readsEverything = &ruleReads{everything: true}
	// readsTheField is a rule that sees its field's own value only as a
	// scalar, a count or a presence: every standard rule, and any rule on
	// a map's keys, which belong to the map field.
	readsTheField = &ruleReads{paths: []readPath{{}}}
	// readsTheWholeField is a rule that may use its field's value in any
	// way: a predefined rule, whose `this` is the field and which sees
	// nothing else.
	readsTheWholeField = &ruleReads{paths: []readPath{{subtree: true}}}
)

// ruleKey names one rule for the analysis cache: the message or field it is
// on, and which of its rules (the rule path for a field rule, the rule id
// for a message rule). Descriptors belong to one generation, so entries of
// two generations never meet.
type ruleKey struct {
	desc protoreflect.Descriptor
	rule string
}

// fieldReads is what the field-level rule at rulePath on fd reads. Only a
// CEL rule needs parsing; its analysis is cached.
func (c *Checker) fieldReads(fd protoreflect.FieldDescriptor, rulePath []*validate.FieldPathElement, ruleDesc protoreflect.FieldDescriptor) *ruleReads {
	if ruleDesc != nil && ruleDesc.IsExtension() {
		return readsTheWholeField
	}
	last := rulePath[len(rulePath)-1]
	for _, el := range rulePath {
		if strings.HasPrefix(el.GetFieldName(), "[") {
			return readsTheWholeField
		}
	}
	if name := last.GetFieldName(); (name != "cel" && name != "cel_expression") || !last.HasIndex() {
		return readsTheField
	}
	key := ruleKey{desc: fd, rule: renderRulePath(rulePath)}
	if r, ok := c.reads.Get(key); ok {
		return r
	}
	return c.reads.Put(key, resolveFieldCEL(fd, rulePath))
}

func renderRulePath(rulePath []*validate.FieldPathElement) string {
	var b strings.Builder
	for i, el := range rulePath {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(int(el.GetFieldNumber())))
		if el.HasIndex() {
			b.WriteByte('[')
			b.WriteString(strconv.FormatUint(el.GetIndex(), 10))
			b.WriteByte(']')
		}
	}
	return b.String()
}

var (
	fieldRulesDesc = (&validate.FieldRules{}).ProtoReflect().Descriptor()
	celField       = fieldRulesDesc.Fields().ByName("cel")
	celExprField   = fieldRulesDesc.Fields().ByName("cel_expression")
	mapKeysName    = (&validate.MapRules{}).ProtoReflect().Descriptor().Fields().ByName("keys").FullName()
)

// resolveFieldCEL finds the expression a field rule path names — through
// nested rules such as repeated.items or map.values, to cel[i] or
// cel_expression[i] — and analyses it. A path that does not lead to one
// reads everything.
func resolveFieldCEL(fd protoreflect.FieldDescriptor, rulePath []*validate.FieldPathElement) *ruleReads {
	rules, err := protovalidate.ResolveFieldRules(fd)
	if err != nil || rules == nil {
		return readsEverything
	}
	msg := rules.ProtoReflect()
	for _, el := range rulePath[:len(rulePath)-1] {
		f := msg.Descriptor().Fields().ByNumber(protoreflect.FieldNumber(el.GetFieldNumber()))
		if f == nil || f.Message() == nil || f.IsList() || f.IsMap() || string(f.Name()) != el.GetFieldName() {
			return readsEverything
		}
		if f.FullName() == mapKeysName {
			return readsTheField
		}
		msg = msg.Get(f).Message()
	}
	at, ok := msg.Interface().(*validate.FieldRules)
	if !ok {
		return readsEverything
	}
	last := rulePath[len(rulePath)-1]
	i := last.GetIndex()
	switch protoreflect.FieldNumber(last.GetFieldNumber()) {
	case celField.Number():
		if i < uint64(len(at.GetCel())) {
			return analyse(at.GetCel()[i].GetExpression())
		}
	case celExprField.Number():
		if i < uint64(len(at.GetCelExpression())) {
			return analyse(at.GetCelExpression()[i])
		}
	}
	return readsEverything
}

// messageReads is what the message-level rule with ruleID on md reads:
// every CEL rule of md with that id (cel_expression's ids are their
// expressions) and, for "message.oneof", every field any of md's oneof
// rules names — which of several fired cannot be told, so all of them
// count. No rule of md matching reads everything.
func (c *Checker) messageReads(md protoreflect.MessageDescriptor, ruleID string) *ruleReads {
	key := ruleKey{desc: md, rule: ruleID}
	if r, ok := c.reads.Get(key); ok {
		return r
	}
	return c.reads.Put(key, resolveMessageRule(md, ruleID))
}

func resolveMessageRule(md protoreflect.MessageDescriptor, ruleID string) *ruleReads {
	rules, err := protovalidate.ResolveMessageRules(md)
	if err != nil || rules == nil {
		return readsEverything
	}
	matched := false
	out := &ruleReads{}
	add := func(r *ruleReads) {
		matched = true
		out.everything = out.everything || r.everything
		out.paths = append(out.paths, r.paths...)
	}
	for _, expr := range rules.GetCelExpression() {
		if expr == ruleID {
			add(analyse(expr))
		}
	}
	for _, r := range rules.GetCel() {
		if r.GetId() == ruleID {
			add(analyse(r.GetExpression()))
		}
	}
	if ruleID == "message.oneof" {
		for _, o := range rules.GetOneof() {
			matched = true
			for _, name := range o.GetFields() {
				out.paths = append(out.paths, readPath{names: []string{name}})
			}
		}
	}
	if !matched || out.everything {
		return readsEverything
	}
	return out
}

// oneofReads is what a oneof rule reads: whether each member is set.
func oneofReads(od protoreflect.OneofDescriptor) *ruleReads {
	fields := od.Fields()
	out := &ruleReads{paths: make([]readPath, fields.Len())}
	for i := range fields.Len() {
		out.paths[i] = readPath{names: []string{string(fields.Get(i).Name())}}
	}
	return out
}

// parser parses CEL without declarations: analysis needs the syntax only,
// and protovalidate has already compiled and checked every expression.
var parser = sync.OnceValues(func() (*cel.Env, error) { return cel.NewEnv() })

// analyse is what a CEL expression reads of `this`. A select chain rooted
// at this (this.a.b) reads that path, whole; under has() it reads only
// whether the path is set. `this` used any other way — bare, ranged over,
// passed to a function, indexed — reads the whole of what it is. Other
// identifiers (rules, rule, now, comprehension variables) hold no request
// data but what a range over this brought in, which that range has already
// counted. An expression that does not parse, a node of a kind this walk
// does not know, or a comprehension that rebinds `this` reads everything.
func analyse(expr string) *ruleReads {
	env, err := parser()
	if err != nil {
		return readsEverything
	}
	tree, issues := env.Parse(expr)
	if issues.Err() != nil {
		return readsEverything
	}
	var a analysis
	a.walk(tree.NativeRep().Expr())
	if a.unknown {
		return readsEverything
	}
	return &ruleReads{paths: a.reads}
}

type analysis struct {
	reads   []readPath
	unknown bool
}

func (a *analysis) walk(e ast.Expr) {
	switch e.Kind() {
	case ast.LiteralKind:
	case ast.IdentKind:
		if e.AsIdent() == "this" {
			a.reads = append(a.reads, readPath{subtree: true})
		}
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			if names, ok := thisChain(sel.Operand()); ok {
				a.reads = append(a.reads, readPath{names: append(names, sel.FieldName())})
				return
			}
			a.walk(sel.Operand())
			return
		}
		if names, ok := thisChain(e); ok {
			a.reads = append(a.reads, readPath{names: names, subtree: true})
			return
		}
		a.walk(sel.Operand())
	case ast.CallKind:
		call := e.AsCall()
		if call.IsMemberFunction() {
			a.walk(call.Target())
		}
		for _, arg := range call.Args() {
			a.walk(arg)
		}
	case ast.ListKind:
		for _, el := range e.AsList().Elements() {
			a.walk(el)
		}
	case ast.MapKind:
		for _, entry := range e.AsMap().Entries() {
			if entry.Kind() != ast.MapEntryKind {
				a.unknown = true
				return
			}
			a.walk(entry.AsMapEntry().Key())
			a.walk(entry.AsMapEntry().Value())
		}
	case ast.StructKind:
		for _, field := range e.AsStruct().Fields() {
			if field.Kind() != ast.StructFieldKind {
				a.unknown = true
				return
			}
			a.walk(field.AsStructField().Value())
		}
	case ast.ComprehensionKind:
		comp := e.AsComprehension()
		if comp.IterVar() == "this" || comp.AccuVar() == "this" || (comp.HasIterVar2() && comp.IterVar2() == "this") {
			a.unknown = true
			return
		}
		for _, part := range []ast.Expr{comp.IterRange(), comp.AccuInit(), comp.LoopCondition(), comp.LoopStep(), comp.Result()} {
			a.walk(part)
		}
	default:
		a.unknown = true
	}
}

// thisChain is the field names of a select chain rooted at `this`
// (this.a.b: a, b), and whether e is one.
func thisChain(e ast.Expr) ([]string, bool) {
	switch e.Kind() {
	case ast.IdentKind:
		return nil, e.AsIdent() == "this"
	case ast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil, false
		}
		names, ok := thisChain(sel.Operand())
		if !ok {
			return nil, false
		}
		return append(names, sel.FieldName()), true
	}
	return nil, false
}
