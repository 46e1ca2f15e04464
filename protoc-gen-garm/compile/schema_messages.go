package compile

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/invopop/jsonschema"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// base64Pattern is what protojson decodes as bytes: standard or URL-safe
// base64, padded or not, one alphabet at a time.
const base64Pattern = `^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?|(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?)$`

func bytesSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", ContentEncoding: "base64", Pattern: base64Pattern}
}

// maxDurationSeconds is the largest magnitude protojson accepts in a
// Duration (ten thousand years).
const maxDurationSeconds = 315576000000

// durationPattern is protojson's canonical Duration spelling: seconds within
// range, up to nine fractional digits, "s".
var durationPattern = `^-?` + group(naturalAlternatives(big.NewInt(0), big.NewInt(maxDurationSeconds))) + `(?:\.[0-9]{1,9})?s$`

// messageValueSchema is a message value's schema: a well-known type's own
// JSON shape, the whole type when written out inline, else the closed object
// its planned children fill.
func (b builder) messageValueSchema(md protoreflect.MessageDescriptor, rules *validate.FieldRules) (*jsonschema.Schema, error) {
	if wrapped, ok := wrapperKind(md); ok {
		// A wrapper has presence: absent is not its zero, so rules ignored for
		// the zero value still apply to a wrapped zero.
		return b.valueSchema(value{kind: wrapped}, rules, false)
	}
	if b.inline || IsOpaque(md) {
		onPath := b.onPath
		if onPath == nil {
			onPath = map[protoreflect.FullName]bool{}
		}
		return opaqueSchema(md, onPath)
	}
	return objectShell(md)
}

// objectShell is a closed object with the message's oneof rules.
func objectShell(md protoreflect.MessageDescriptor) (*jsonschema.Schema, error) {
	constraints, err := oneofConstraints(md)
	if err != nil {
		return nil, err
	}
	return &jsonschema.Schema{Type: "object", AdditionalProperties: jsonschema.FalseSchema, AllOf: constraints}, nil
}

// opaqueSchema is the whole schema of a message garm treats as one value:
// the well-known types' own JSON shapes, and any other message (Card, the
// descriptor types) written out as closed objects, with recursion cut by an
// open object. Inside it protojson's optionality is kept: only proto2's and
// protovalidate's required are required, and nothing carries a description
// (so the schema does not depend on whether a dependency's comments were
// available).
func opaqueSchema(md protoreflect.MessageDescriptor, onPath map[protoreflect.FullName]bool) (*jsonschema.Schema, error) {
	if wrapped, ok := wrapperKind(md); ok {
		return builder{}.valueSchema(value{kind: wrapped}, nil, false)
	}
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		return &jsonschema.Schema{Type: "string", Format: "date-time"}, nil
	case "google.protobuf.Duration":
		return &jsonschema.Schema{Type: "string", Pattern: durationPattern}, nil
	case "google.protobuf.Struct":
		return &jsonschema.Schema{Type: "object"}, nil
	case "google.protobuf.Value":
		return &jsonschema.Schema{}, nil
	case "google.protobuf.ListValue":
		return &jsonschema.Schema{Type: "array"}, nil
	case "google.protobuf.FieldMask":
		return &jsonschema.Schema{Type: "string"}, nil
	case "google.protobuf.Any":
		props := jsonschema.NewProperties()
		props.Set("@type", &jsonschema.Schema{Type: "string"})
		return &jsonschema.Schema{Type: "object", Properties: props}, nil
	}
	if onPath[md.FullName()] {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	onPath[md.FullName()] = true
	defer delete(onPath, md.FullName())
	s, err := objectShell(md)
	if err != nil {
		return nil, err
	}
	fields := fieldsByNumber(md)
	if len(fields) > 0 {
		s.Properties = jsonschema.NewProperties()
	}
	for _, fd := range fields {
		fs, err := fieldSchema(fd, true, onPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fd.FullName(), err)
		}
		s.Properties.Set(string(fd.Name()), fs)
		if validationRequired(fd) {
			s.Required = append(s.Required, string(fd.Name()))
		}
	}
	slices.Sort(s.Required)
	return s, nil
}

// oneofConstraints says, on a message's object, that at most one member of
// each oneof is sent, and at least one where protovalidate requires it:
// {"not":{"required":[a,b]}} for every pair, {"anyOf":[{"required":[a]},…]}
// for a required one. AssembleSchema recognises these two shapes to drop a
// member a caller is not shown. protovalidate's message-level oneof rules are
// mapped the same way when every field they name has presence; otherwise
// "set" means "not the zero value", which is left to garmd.
func oneofConstraints(md protoreflect.MessageDescriptor) ([]*jsonschema.Schema, error) {
	var out []*jsonschema.Schema
	pairs := map[[2]string]bool{}
	add := func(names []string, required bool) {
		for i, a := range names {
			for _, b := range names[i+1:] {
				if pairs[[2]string{a, b}] {
					continue
				}
				pairs[[2]string{a, b}], pairs[[2]string{b, a}] = true, true
				out = append(out, &jsonschema.Schema{Not: &jsonschema.Schema{Required: []string{a, b}}})
			}
		}
		if required {
			any := &jsonschema.Schema{}
			for _, n := range names {
				any.AnyOf = append(any.AnyOf, &jsonschema.Schema{Required: []string{n}})
			}
			out = append(out, any)
		}
	}
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		r, err := oneofRules(od)
		if err != nil {
			return nil, err
		}
		var names []string
		for j := 0; j < od.Fields().Len(); j++ {
			names = append(names, string(od.Fields().Get(j).Name()))
		}
		add(names, r.GetRequired())
	}
	mr, err := messageRules(md)
	if err != nil {
		return nil, err
	}
	for _, group := range mr.GetOneof() {
		mappable := len(group.GetFields()) > 0
		for _, name := range group.GetFields() {
			fd := md.Fields().ByName(protoreflect.Name(name))
			if fd == nil {
				return nil, fmt.Errorf("(buf.validate.message).oneof names %q, which %s does not have", name, md.FullName())
			}
			mappable = mappable && fd.HasPresence() && !fd.IsList() && !fd.IsMap()
		}
		if mappable {
			add(group.GetFields(), group.GetRequired())
		}
	}
	return out, nil
}

// encodeSchema writes a schema as compact JSON with sorted keys, numbers as
// written. An empty schema is {}, never true.
func encodeSchema(s *jsonschema.Schema) (string, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	out, err := canonicalJSON(raw)
	if err != nil {
		return "", err
	}
	if string(out) == "true" {
		return "{}", nil
	}
	return string(out), nil
}

// canonicalJSON re-encodes JSON compactly with object keys sorted, numbers
// kept exactly as written and no HTML escaping.
func canonicalJSON(raw []byte) ([]byte, error) {
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return encodeJSON(v)
}
