package compile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/invopop/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MessageSchema is the JSON Schema shell of a tool input or output message:
// a closed object with the message's comment as its description and its
// oneofs' exclusivity, into which AssembleSchema places the fields'
// fragments. An opaque message (IsOpaque) has no fields in a plan, so its
// shell is the whole schema of its type.
func MessageSchema(md protoreflect.MessageDescriptor) (string, error) {
	if IsOpaque(md) {
		s, err := opaqueSchema(md, map[protoreflect.FullName]bool{})
		if err != nil {
			return "", err
		}
		return encodeSchema(s)
	}
	s, err := objectShell(md)
	if err != nil {
		return "", err
	}
	s.Description = Doc(md)
	return encodeSchema(s)
}

// FieldSchema is a field's own schema fragment, its children excluded: the
// whole schema of a LEAF; for a field whose children are planned, the closed
// object (or the list or map of them) that AssembleSchema fills. Its
// description is the field's leading comment; protovalidate's rules become
// keywords where JSON Schema has one (docs/decisions/0007-json-schema-fragments.md).
func FieldSchema(fd protoreflect.FieldDescriptor) (string, error) {
	s, err := fieldSchema(fd, false, nil)
	if err != nil {
		return "", err
	}
	s.Description = Doc(fd)
	return encodeSchema(s)
}

// FieldRequired reports whether a field is listed in its parent's "required":
// when it has no presence and is not a list or map (an absent value would read
// as a real zero), when proto2 requires it, or when protovalidate refuses its
// absence: its required rule, or — a list or map being absent when empty — a
// minimum count.
func FieldRequired(fd protoreflect.FieldDescriptor) bool {
	if !fd.HasPresence() && !fd.IsList() && !fd.IsMap() {
		return true
	}
	return validationRequired(fd)
}

// validationRequired is FieldRequired without the presence rule.
func validationRequired(fd protoreflect.FieldDescriptor) bool {
	if fd.Cardinality() == protoreflect.Required {
		return true
	}
	rules, err := fieldRules(fd)
	if err != nil || rules == nil || rules.GetIgnore() == validate.Ignore_IGNORE_ALWAYS {
		return false
	}
	if rules.GetRequired() {
		return true
	}
	if rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE {
		return false
	}
	return (fd.IsList() && rules.GetRepeated().GetMinItems() > 0) || (fd.IsMap() && rules.GetMap().GetMinPairs() > 0)
}

// value is what one JSON value of a field is: its kind and, for enums and
// messages, their descriptors. A list's element and a map's key or value
// are values too.
type value struct {
	kind    protoreflect.Kind
	enum    protoreflect.EnumDescriptor
	message protoreflect.MessageDescriptor
}

func valueOf(fd protoreflect.FieldDescriptor) value {
	return value{fd.Kind(), fd.Enum(), fd.Message()}
}

func (v value) String() string {
	switch {
	case v.message != nil:
		return string(v.message.FullName())
	case v.enum != nil:
		return string(v.enum.FullName())
	}
	return v.kind.String()
}

// ruleName is the FieldRules case that applies to the value, "" for
// messages that take none.
func (v value) ruleName() string {
	if v.message == nil {
		return v.kind.String()
	}
	if wrapped, ok := wrapperKind(v.message); ok {
		return wrapped.String()
	}
	switch v.message.FullName() {
	case "google.protobuf.Timestamp":
		return "timestamp"
	case "google.protobuf.Duration":
		return "duration"
	case "google.protobuf.Any":
		return "any"
	case "google.protobuf.FieldMask":
		return "field_mask"
	}
	return ""
}

// wrapperKind is the kind a google.protobuf wrapper wraps.
func wrapperKind(md protoreflect.MessageDescriptor) (protoreflect.Kind, bool) {
	switch md.FullName() {
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue",
		"google.protobuf.Int64Value", "google.protobuf.UInt64Value",
		"google.protobuf.Int32Value", "google.protobuf.UInt32Value",
		"google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return md.Fields().ByNumber(1).Kind(), true
	}
	return 0, false
}

// fieldSchema builds a field's schema. inline says whether message values
// are written out whole (inside an opaque type) or left as shells for their
// planned children; onPath holds the messages being written out, which is
// where recursion is cut.
func fieldSchema(fd protoreflect.FieldDescriptor, inline bool, onPath map[protoreflect.FullName]bool) (*jsonschema.Schema, error) {
	rules, err := fieldRules(fd)
	if err != nil {
		return nil, err
	}
	if rules.GetIgnore() == validate.Ignore_IGNORE_ALWAYS {
		rules = nil
	}
	b := builder{inline: inline, onPath: onPath}
	var s *jsonschema.Schema
	switch {
	case fd.IsMap():
		s, err = b.mapSchema(fd, rules)
	case fd.IsList():
		s, err = b.listSchema(fd, rules)
	default:
		ignoreZero := rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE && !fd.HasPresence()
		s, err = b.valueSchema(valueOf(fd), rules, ignoreZero)
		if err == nil && rules.GetRequired() && !fd.HasPresence() {
			err = requireNonZero(s, valueOf(fd))
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

type builder struct {
	inline bool
	onPath map[protoreflect.FullName]bool
}

// valueSchema is one value's schema under its rules. ignoreZero says the
// rules do not apply to the zero value, which the schema must then admit
// too.
func (b builder) valueSchema(v value, rules *validate.FieldRules, ignoreZero bool) (*jsonschema.Schema, error) {
	if err := checkRuleKind(rules, v.ruleName(), "a "+v.String()+" value"); err != nil {
		return nil, err
	}
	typed := typedRules(rules)
	var base, rule *jsonschema.Schema
	var zero any
	switch v.kind {
	case protoreflect.BoolKind:
		base, rule, zero = &jsonschema.Schema{Type: "boolean"}, &jsonschema.Schema{}, false
		if r := rules.GetBool(); r.HasConst() {
			rule.Const = r.GetConst()
		}
		for _, e := range rules.GetBool().GetExample() {
			base.Examples = append(base.Examples, e)
		}
	case protoreflect.StringKind:
		var err error
		base, zero = &jsonschema.Schema{Type: "string"}, ""
		if rule, err = stringRule(rules.GetString()); err != nil {
			return nil, err
		}
	case protoreflect.BytesKind:
		// No bytes rule has a keyword: lengths count bytes, not base64
		// characters.
		return bytesSchema(), nil
	case protoreflect.EnumKind:
		// The zero value is never admitted by name (unless it is the only
		// one), so ignoring the rules for it changes nothing.
		return enumSchema(v.enum, rules.GetEnum())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		var err error
		zero = json.Number("0")
		if base, rule, err = floatSchema(v.kind, typed); err != nil {
			return nil, err
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return b.messageValueSchema(v.message, rules)
	default:
		var err error
		if base, rule, zero, err = integerSchema(v.kind, typed, is64Bit(v.kind)); err != nil {
			return nil, err
		}
	}
	return finish(base, rule, ignoreZero, &jsonschema.Schema{Const: zero}), nil
}

// finish puts a value's rule keywords onto its base schema, or — when the
// rules are ignored for the zero value — beside the zero value as
// alternatives.
func finish(base, rule *jsonschema.Schema, ignoreZero bool, zero *jsonschema.Schema) *jsonschema.Schema {
	if rule.Examples != nil {
		base.Examples, rule.Examples = rule.Examples, nil
	}
	if reflect.DeepEqual(rule, &jsonschema.Schema{}) {
		return base
	}
	if ignoreZero {
		base.AnyOf = []*jsonschema.Schema{zero, rule}
		return base
	}
	absorb(base, rule)
	return base
}

// requireNonZero is protovalidate's required on a value without presence:
// the zero value is refused.
func requireNonZero(s *jsonschema.Schema, v value) error {
	switch v.kind {
	case protoreflect.StringKind, protoreflect.BytesKind:
		s.MinLength = uint64p(max(1, derefOr(s.MinLength)))
		return nil
	case protoreflect.EnumKind:
		s.Enum = slices.DeleteFunc(s.Enum, func(name any) bool {
			ev := v.enum.Values().ByName(protoreflect.Name(name.(string)))
			return ev != nil && ev.Number() == 0
		})
		if len(s.Enum) == 0 {
			return fmt.Errorf("required, but its rules admit only the zero value")
		}
		return nil
	}
	var zero any = json.Number("0")
	switch {
	case v.kind == protoreflect.BoolKind:
		zero = false
	case is64Bit(v.kind):
		zero = "0"
	}
	absorb(s, &jsonschema.Schema{Not: &jsonschema.Schema{Const: zero}})
	return nil
}

func (b builder) listSchema(fd protoreflect.FieldDescriptor, rules *validate.FieldRules) (*jsonschema.Schema, error) {
	if err := checkRuleKind(rules, "repeated", "a list"); err != nil {
		return nil, err
	}
	r := rules.GetRepeated()
	items, err := b.nestedSchema(valueOf(fd), r.GetItems())
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	base, rule := &jsonschema.Schema{Type: "array", Items: items}, &jsonschema.Schema{}
	if r.HasMinItems() {
		rule.MinItems = uint64p(r.GetMinItems())
	}
	if r.HasMaxItems() {
		rule.MaxItems = uint64p(r.GetMaxItems())
	}
	rule.UniqueItems = r.GetUnique()
	ignoreZero := rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE
	s := finish(base, rule, ignoreZero, &jsonschema.Schema{MaxItems: uint64p(0)})
	if rules.GetRequired() {
		s.MinItems = uint64p(max(1, derefOr(s.MinItems)))
	}
	return s, nil
}

func (b builder) mapSchema(fd protoreflect.FieldDescriptor, rules *validate.FieldRules) (*jsonschema.Schema, error) {
	if err := checkRuleKind(rules, "map", "a map"); err != nil {
		return nil, err
	}
	r := rules.GetMap()
	values, err := b.nestedSchema(valueOf(fd.MapValue()), r.GetValues())
	if err != nil {
		return nil, fmt.Errorf("map values: %w", err)
	}
	keys, err := keySchema(fd.MapKey().Kind(), r.GetKeys())
	if err != nil {
		return nil, fmt.Errorf("map keys: %w", err)
	}
	base := &jsonschema.Schema{Type: "object", AdditionalProperties: values, PropertyNames: keys}
	rule := &jsonschema.Schema{}
	if r.HasMinPairs() {
		rule.MinProperties = uint64p(r.GetMinPairs())
	}
	if r.HasMaxPairs() {
		rule.MaxProperties = uint64p(r.GetMaxPairs())
	}
	ignoreZero := rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE
	s := finish(base, rule, ignoreZero, &jsonschema.Schema{MaxProperties: uint64p(0)})
	if rules.GetRequired() {
		s.MinProperties = uint64p(max(1, derefOr(s.MinProperties)))
	}
	return s, nil
}

// nestedSchema is a list element's or map value's schema under the items or
// values rules, which apply to every element (required is meaningless there:
// an element is always set).
func (b builder) nestedSchema(v value, rules *validate.FieldRules) (*jsonschema.Schema, error) {
	if rules.GetIgnore() == validate.Ignore_IGNORE_ALWAYS {
		rules = nil
	}
	return b.valueSchema(v, rules, rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE)
}

// keySchema is a map key's schema as protojson spells keys: the string
// itself, "true"/"false", or an integer's canonical decimal. nil for string
// keys without rules.
func keySchema(kind protoreflect.Kind, rules *validate.FieldRules) (*jsonschema.Schema, error) {
	if rules.GetIgnore() == validate.Ignore_IGNORE_ALWAYS {
		rules = nil
	}
	if err := checkRuleKind(rules, kind.String(), "a "+kind.String()+" map key"); err != nil {
		return nil, err
	}
	ignoreZero := rules.GetIgnore() == validate.Ignore_IGNORE_IF_ZERO_VALUE
	switch kind {
	case protoreflect.StringKind:
		rule, err := stringRule(rules.GetString())
		if err != nil {
			return nil, err
		}
		s := finish(&jsonschema.Schema{}, rule, ignoreZero, &jsonschema.Schema{Const: ""})
		if reflect.DeepEqual(s, &jsonschema.Schema{}) {
			return nil, nil
		}
		s.Type = "string"
		return s, nil
	case protoreflect.BoolKind:
		s := &jsonschema.Schema{Type: "string", Enum: []any{"false", "true"}}
		if r := rules.GetBool(); r.HasConst() {
			s.Enum = []any{fmt.Sprint(r.GetConst())}
		}
		return s, nil
	default:
		base, rule, zero, err := integerSchema(kind, typedRules(rules), true)
		if err != nil {
			return nil, err
		}
		base.Format = ""
		return finish(base, rule, ignoreZero, &jsonschema.Schema{Const: zero}), nil
	}
}
