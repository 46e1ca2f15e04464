package compile

import (
	"fmt"
	"sort"
	"strings"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// vocabulary resolves garm's extensions, and only those, whatever else the
// process has linked.
var vocabulary = func() *protoregistry.Types {
	types := new(protoregistry.Types)
	for _, xt := range []protoreflect.ExtensionType{
		toolv1.E_FieldPolicy, toolv1.E_Tool, toolv1.E_DefaultFieldPolicy,
		toolv1.E_Compartments, toolv1.E_ToolSets, toolv1.E_Attributes,
	} {
		if err := types.RegisterExtension(xt); err != nil {
			panic(err)
		}
	}
	return types
}()

// ToolPolicyOf reads a method's (garm.tool.v1.tool) declaration. declared is
// false when the method carries none.
func ToolPolicyOf(md protoreflect.MethodDescriptor) (policy *toolv1.ToolPolicy, declared bool, err error) {
	var opts descriptorpb.MethodOptions
	got, err := readExtension(md.Options(), &opts, toolv1.E_Tool, string(md.FullName()))
	if err != nil || got == nil {
		return nil, false, err
	}
	return got.(*toolv1.ToolPolicy), true, nil
}

// DeclarationsOf reads a file's (garm.tool.v1.compartments) and
// (garm.tool.v1.tool_sets) declarations; either is nil when not set.
func DeclarationsOf(f protoreflect.FileDescriptor) (compartments, toolSets *toolv1.DeclSet, err error) {
	var copts, sopts descriptorpb.FileOptions
	c, err := readExtension(f.Options(), &copts, toolv1.E_Compartments, f.Path())
	if err != nil {
		return nil, nil, err
	}
	s, err := readExtension(f.Options(), &sopts, toolv1.E_ToolSets, f.Path())
	if err != nil {
		return nil, nil, err
	}
	if c != nil {
		compartments = c.(*toolv1.DeclSet)
	}
	if s != nil {
		toolSets = s.(*toolv1.DeclSet)
	}
	return compartments, toolSets, nil
}

// AttributesOf reads a file's (garm.tool.v1.attributes) declarations; nil
// when not set.
func AttributesOf(f protoreflect.FileDescriptor) (*toolv1.AttributeSet, error) {
	var opts descriptorpb.FileOptions
	a, err := readExtension(f.Options(), &opts, toolv1.E_Attributes, f.Path())
	if err != nil || a == nil {
		return nil, err
	}
	return a.(*toolv1.AttributeSet), nil
}

// readExtension re-reads options against the garm vocabulary and returns the
// extension's value, or nil when it is not set. A value carrying fields this
// build does not know is refused.
func readExtension(options proto.Message, into proto.Message, xt protoreflect.ExtensionType, where string) (proto.Message, error) {
	value, err := rereadOption(options, into, vocabulary, xt, where)
	if err != nil || value == nil {
		return nil, err
	}
	if unknown := unknownFields(value.ProtoReflect(), string(xt.TypeDescriptor().FullName())); len(unknown) > 0 {
		return nil, fmt.Errorf("%s: (%s) sets fields this build of garm does not know (%s); upgrade protoc-gen-garm and garm-catalogue before using them",
			where, xt.TypeDescriptor().FullName(), strings.Join(unknown, ", "))
	}
	return value, nil
}

// rereadOption marshals options and reads them back against resolver, so
// descriptors from any source (a plugin request, an in-process compile, an
// image) are read the same way, and returns the extension xt's value, or nil
// when it is not set. Whether the value holds fields this build cannot read
// is the caller's judgement.
func rereadOption(options, into proto.Message, resolver *protoregistry.Types, xt protoreflect.ExtensionType, where string) (proto.Message, error) {
	if options == nil {
		return nil, nil
	}
	if value, ok := readUndecodedOption(options.ProtoReflect(), resolver, xt); ok {
		return value, nil
	}
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(options)
	if err != nil {
		return nil, fmt.Errorf("%s: reading (%s): %w", where, xt.TypeDescriptor().FullName(), err)
	}
	if err := (proto.UnmarshalOptions{Resolver: resolver}).Unmarshal(raw, into); err != nil {
		return nil, fmt.Errorf("%s: reading (%s): %w", where, xt.TypeDescriptor().FullName(), err)
	}
	if !proto.HasExtension(into, xt) {
		return nil, nil
	}
	return proto.GetExtension(into, xt).(proto.Message), nil
}

// readUndecodedOption is rereadOption's answer read from options' unknown
// fields alone, without encoding the options and decoding all of them
// again, for options decoded with their extensions left unresolved (as the
// artifact reader decodes every descriptor's): xt's value is then made of
// xt's records among the unknown fields, merged in order, and decoding
// their payloads one after another is that merge. ok is false, and the
// caller re-reads the whole options, whenever the answer could be anything
// else or an error: an extension decoded in options, a record of xt that is
// not length-delimited, a record of another extension resolver knows for
// options (re-reading decodes it too, and may refuse it), unknown fields or
// a payload that do not decode.
func readUndecodedOption(m protoreflect.Message, resolver *protoregistry.Types, xt protoreflect.ExtensionType) (value proto.Message, ok bool) {
	xd := xt.TypeDescriptor()
	if xd.Kind() != protoreflect.MessageKind || xd.ContainingMessage().FullName() != m.Descriptor().FullName() {
		return nil, false
	}
	if known, err := resolver.FindExtensionByNumber(xd.ContainingMessage().FullName(), xd.Number()); err != nil || known != xt {
		return nil, false
	}
	decoded := false
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		decoded = fd.IsExtension()
		return !decoded
	})
	if decoded {
		return nil, false
	}
	var payload []byte
	found := false
	for raw := m.GetUnknown(); len(raw) > 0; {
		num, typ, n := protowire.ConsumeField(raw)
		if n < 0 {
			return nil, false
		}
		switch {
		case num == xd.Number():
			if typ != protowire.BytesType {
				return nil, false
			}
			_, _, tagLen := protowire.ConsumeTag(raw)
			v, vn := protowire.ConsumeBytes(raw[tagLen:n])
			if vn < 0 {
				return nil, false
			}
			if !found {
				// The one record's payload, read in place; capped, so a
				// second record's append copies rather than writing into
				// the options' bytes.
				payload, found = v[:len(v):len(v)], true
			} else {
				payload = append(payload, v...)
			}
		default:
			if _, err := resolver.FindExtensionByNumber(m.Descriptor().FullName(), num); err == nil {
				return nil, false
			}
		}
		raw = raw[n:]
	}
	if !found {
		return nil, true
	}
	value = xt.New().Message().Interface()
	if err := (proto.UnmarshalOptions{Resolver: resolver}).Unmarshal(payload, value); err != nil {
		return nil, false
	}
	return value, true
}

// unknownFields lists, sorted, where m or any message below it holds fields
// its linked descriptor does not declare.
//
// Only fields that hold messages can hold unknown fields below them, so a
// message without extension ranges is walked through its message fields
// alone, with no path built and no value boxed for a scalar field; one
// that may hold extensions is walked through every populated field
// (Range), extensions included. Either way the fields visited are the
// populated ones (Has), and the list is the same.
func unknownFields(m protoreflect.Message, path string) []string {
	var found []string
	if len(m.GetUnknown()) > 0 {
		found = append(found, path+": "+describeUnknown(m.GetUnknown()))
	}
	visit := func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				child := path + "." + string(fd.Name())
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					found = append(found, unknownFields(mv.Message(), fmt.Sprintf("%s[%v]", child, k.Interface()))...)
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				child := path + "." + string(fd.Name())
				for i := 0; i < v.List().Len(); i++ {
					found = append(found, unknownFields(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", child, i))...)
				}
			}
		case fd.Message() != nil:
			found = append(found, unknownFields(v.Message(), path+"."+string(fd.Name()))...)
		}
		return true
	}
	if md := m.Descriptor(); md.ExtensionRanges().Len() > 0 {
		m.Range(visit)
	} else {
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Message() != nil && m.Has(fd) {
				visit(fd, m.Get(fd))
			}
		}
	}
	sort.Strings(found)
	return found
}

func describeUnknown(raw protoreflect.RawFields) string {
	var numbers []string
	for len(raw) > 0 {
		num, _, n := protowire.ConsumeField(raw)
		if n < 0 {
			return "malformed fields"
		}
		numbers = append(numbers, fmt.Sprintf("field %d", num))
		raw = raw[n:]
	}
	return strings.Join(numbers, ", ")
}
