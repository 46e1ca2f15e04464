package compile

import (
	"strings"

	planv1 "github.com/garm-dev/garm/gen/garm/plan/v1"
	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// PolicyOrigin says where a field's policy came from.
type PolicyOrigin int

const (
	// NoPolicy: neither the field nor its message declares one (lint L1).
	NoPolicy PolicyOrigin = iota
	// OwnPolicy: the field's own (garm.tool.v1.field_policy).
	OwnPolicy
	// DefaultPolicy: its message's (garm.tool.v1.default_field_policy).
	DefaultPolicy
)

func (o PolicyOrigin) String() string {
	switch o {
	case OwnPolicy:
		return "field_policy"
	case DefaultPolicy:
		return "default_field_policy"
	default:
		return "no policy"
	}
}

// FieldPolicyOf resolves a field's policy: its own field_policy wins, else
// the default_field_policy of the message that declares the field, else it
// has none (origin NoPolicy, policy nil).
func FieldPolicyOf(fd protoreflect.FieldDescriptor) (*toolv1.FieldPolicy, PolicyOrigin, error) {
	var fopts descriptorpb.FieldOptions
	own, err := readExtension(fd.Options(), &fopts, toolv1.E_FieldPolicy, string(fd.FullName()))
	if err != nil {
		return nil, NoPolicy, err
	}
	if own != nil {
		return own.(*toolv1.FieldPolicy), OwnPolicy, nil
	}
	def, err := DefaultFieldPolicyOf(fd.ContainingMessage())
	if err != nil || def == nil {
		return nil, NoPolicy, err
	}
	return def, DefaultPolicy, nil
}

// DefaultFieldPolicyOf is a message's (garm.tool.v1.default_field_policy),
// or nil when it declares none.
func DefaultFieldPolicyOf(md protoreflect.MessageDescriptor) (*toolv1.FieldPolicy, error) {
	var mopts descriptorpb.MessageOptions
	def, err := readExtension(md.Options(), &mopts, toolv1.E_DefaultFieldPolicy, string(md.FullName()))
	if err != nil || def == nil {
		return nil, err
	}
	return def.(*toolv1.FieldPolicy), nil
}

// IsOpaque reports whether garm treats a message as one value rather than a
// tree of fields: every google.protobuf.* type (well-known types have their
// own JSON shape) and garm.card.v1.Card (projected by its own rules).
func IsOpaque(md protoreflect.MessageDescriptor) bool {
	name := md.FullName()
	return strings.HasPrefix(string(name), "google.protobuf.") || name == "garm.card.v1.Card"
}

// ContainerOf says where a field's children go in a plan: nowhere for a
// LEAF (a scalar, enum, list or map of them, or an opaque message), else
// into the message, the list's elements or the map's values.
func ContainerOf(fd protoreflect.FieldDescriptor) planv1.Container {
	switch {
	case fd.IsMap():
		if v := fd.MapValue(); v.Message() != nil && !IsOpaque(v.Message()) {
			return planv1.Container_CONTAINER_MAP_OF_MESSAGES
		}
	case fd.Message() != nil && !IsOpaque(fd.Message()):
		if fd.IsList() {
			return planv1.Container_CONTAINER_LIST_OF_MESSAGES
		}
		return planv1.Container_CONTAINER_MESSAGE
	}
	return planv1.Container_CONTAINER_LEAF
}

// ChildMessage is the message whose fields are a non-leaf field's children,
// or nil for a LEAF.
func ChildMessage(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	switch ContainerOf(fd) {
	case planv1.Container_CONTAINER_MAP_OF_MESSAGES:
		return fd.MapValue().Message()
	case planv1.Container_CONTAINER_MESSAGE, planv1.Container_CONTAINER_LIST_OF_MESSAGES:
		return fd.Message()
	}
	return nil
}

// Doc is a descriptor's leading comment with each line's leading space and
// the surrounding blank lines removed, or "" when the descriptor has no
// source information.
func Doc(d protoreflect.Descriptor) string {
	f := d.ParentFile()
	if f == nil {
		return ""
	}
	comment := f.SourceLocations().ByDescriptor(d).LeadingComments
	lines := strings.Split(comment, "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(strings.TrimPrefix(line, " "), " \t\r")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
