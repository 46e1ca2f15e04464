package compile

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// unknownFieldsByRange is unknownFields as it was before it skipped scalar
// fields: every populated field visited through Range.
func unknownFieldsByRange(m protoreflect.Message, path string) []string {
	var found []string
	if len(m.GetUnknown()) > 0 {
		found = append(found, path+": "+describeUnknown(m.GetUnknown()))
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		child := path + "." + string(fd.Name())
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
					found = append(found, unknownFieldsByRange(mv.Message(), fmt.Sprintf("%s[%v]", child, k.Interface()))...)
					return true
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := 0; i < v.List().Len(); i++ {
					found = append(found, unknownFieldsByRange(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", child, i))...)
				}
			}
		case fd.Message() != nil:
			found = append(found, unknownFieldsByRange(v.Message(), child)...)
		}
		return true
	})
	sort.Strings(found)
	return found
}

// withUnknown sets field n (a varint) as unknown on m and returns m.
func withUnknown[M proto.Message](m M, n protowire.Number) M {
	raw := protowire.AppendTag(nil, n, protowire.VarintType)
	raw = protowire.AppendVarint(raw, 1)
	m.ProtoReflect().SetUnknown(append(m.ProtoReflect().GetUnknown(), raw...))
	return m
}

// An annotation's unknown fields are found wherever they are — the top,
// a singular message, an element of a list of messages, a message below
// an element, a message extension of an options message — and named as
// walking every populated field names them, scalars set beside them or
// not.
func TestUnknownFieldsAreFoundAtEveryDepthAsByWalkingEveryField(t *testing.T) {
	policy := func() *toolv1.ToolPolicy {
		return &toolv1.ToolPolicy{
			Name: "pay", Description: "Pays.", Compartments: []string{"a", "b"},
			Effects:  &toolv1.ToolPolicy_Effects{Idempotent: true},
			Approval: &toolv1.ToolPolicy_Approval{Notes: "n"},
			Instance: &toolv1.InstancePolicy{Require: []*toolv1.InstanceRule{{Id: "r0"}, {Id: "r1"}}},
			Limits:   []*toolv1.Limit{{Id: "l0", Kind: &toolv1.Limit_Rate_{Rate: &toolv1.Limit_Rate{}}}},
		}
	}
	cases := map[string]proto.Message{
		"none":    policy(),
		"empty":   &toolv1.ToolPolicy{},
		"top":     withUnknown(policy(), 99),
		"effects": func() proto.Message { p := policy(); withUnknown(p.Effects, 98); return p }(),
		"two deep, in a list": func() proto.Message {
			p := policy()
			withUnknown(p.Instance.Require[1], 97)
			withUnknown(p.Instance, 96)
			return p
		}(),
		"below a list element": func() proto.Message { p := policy(); withUnknown(p.Limits[0].GetRate(), 95); return p }(),
		"an extension of options": func() proto.Message {
			p := policy()
			withUnknown(p.Instance.Require[0], 94)
			opts := withUnknown(&descriptorpb.MethodOptions{Deprecated: proto.Bool(true)}, 93)
			proto.SetExtension(opts, toolv1.E_Tool, p)
			return opts
		}(),
	}
	for name, m := range cases {
		want := unknownFieldsByRange(m.ProtoReflect(), "x")
		got := unknownFields(m.ProtoReflect(), "x")
		if !slices.Equal(got, want) {
			t.Errorf("%s: found %q, want %q", name, got, want)
		}
		if name != "none" && name != "empty" && len(got) == 0 {
			t.Errorf("%s: no unknown field found", name)
		}
	}
}

// rereadOptionByEncoding is rereadOption as it was before it read options'
// unknown fields directly: the options encoded and decoded again.
func rereadOptionByEncoding(options, into proto.Message, resolver *protoregistry.Types, xt protoreflect.ExtensionType) (proto.Message, error) {
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(options)
	if err != nil {
		return nil, err
	}
	if err := (proto.UnmarshalOptions{Resolver: resolver}).Unmarshal(raw, into); err != nil {
		return nil, err
	}
	if !proto.HasExtension(into, xt) {
		return nil, nil
	}
	return proto.GetExtension(into, xt).(proto.Message), nil
}

// A tool's declaration read from options decoded with extensions left
// unresolved (as the artifact reader decodes them) is the one encoding the
// options and decoding them again gives, and so is every refusal: set
// once, set twice (merged), absent, beside other options and extensions,
// with a field this build does not know, not length-delimited, not
// decoding, beside a malformed declaration of another garm extension, and
// options whose extensions were decoded.
func TestAnOptionReadFromUndecodedFieldsIsTheOneReReadingGives(t *testing.T) {
	tool := func(p *toolv1.ToolPolicy, extra ...byte) []byte {
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		raw := protowire.AppendTag(nil, toolv1.E_Tool.TypeDescriptor().Number(), protowire.BytesType)
		return protowire.AppendBytes(raw, append(b, extra...))
	}
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1)
	deprecated := protowire.AppendVarint(protowire.AppendTag(nil, 33, protowire.VarintType), 1)
	otherExt := protowire.AppendBytes(protowire.AppendTag(nil, 77777, protowire.BytesType), []byte("x"))
	wrongType := protowire.AppendVarint(protowire.AppendTag(nil, toolv1.E_Tool.TypeDescriptor().Number(), protowire.VarintType), 5)
	notDecoding := protowire.AppendBytes(protowire.AppendTag(nil, toolv1.E_Tool.TypeDescriptor().Number(), protowire.BytesType), []byte{0xff})
	join := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	cases := []struct {
		name string
		raw  []byte
		fast bool // read without re-encoding
	}{
		{"empty", nil, true},
		{"another option only", deprecated, true},
		{"once", tool(&toolv1.ToolPolicy{Name: "pay", Compartments: []string{"a"}}), true},
		{"twice, merged", join(tool(&toolv1.ToolPolicy{Name: "pay", Compartments: []string{"a"}}), deprecated, tool(&toolv1.ToolPolicy{Description: "d", Compartments: []string{"b"}, Effects: &toolv1.ToolPolicy_Effects{Idempotent: true}})), true},
		{"beside an extension garm does not declare", join(otherExt, tool(&toolv1.ToolPolicy{Name: "pay"})), true},
		{"with a field this build does not know", tool(&toolv1.ToolPolicy{Name: "pay"}, unknown...), true},
		{"not length-delimited", join(tool(&toolv1.ToolPolicy{Name: "pay"}), wrongType), false},
		{"not decoding", join(tool(&toolv1.ToolPolicy{Name: "pay"}), notDecoding), false},
	}
	for _, c := range cases {
		var opts descriptorpb.MethodOptions
		if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(c.raw, &opts); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		compare(t, c.name, &opts, c.fast)
	}

	// Malformed unknown fields, set directly: a decoder keeps none.
	var malformed descriptorpb.MethodOptions
	malformed.ProtoReflect().SetUnknown([]byte{0x0a})
	compare(t, "malformed unknown fields", &malformed, false)

	// Options decoded with garm's extensions resolved, as a plugin request
	// may hold them.
	var decoded descriptorpb.MethodOptions
	if err := (proto.UnmarshalOptions{Resolver: vocabulary}).Unmarshal(tool(&toolv1.ToolPolicy{Name: "pay"}), &decoded); err != nil {
		t.Fatal(err)
	}
	compare(t, "decoded extensions", &decoded, false)

	// A malformed declaration of another garm extension of the same
	// options: re-reading decodes it too and refuses it.
	var fileOpts descriptorpb.FileOptions
	raw := join(protowire.AppendBytes(protowire.AppendTag(nil, toolv1.E_ToolSets.TypeDescriptor().Number(), protowire.BytesType), []byte{0xff}),
		protowire.AppendBytes(protowire.AppendTag(nil, toolv1.E_Compartments.TypeDescriptor().Number(), protowire.BytesType), nil))
	if err := (proto.UnmarshalOptions{Resolver: new(protoregistry.Types)}).Unmarshal(raw, &fileOpts); err != nil {
		t.Fatal(err)
	}
	if _, ok := readUndecodedOption(fileOpts.ProtoReflect(), vocabulary, toolv1.E_Compartments); ok {
		t.Error("another extension's malformed declaration was read past")
	}
	var want descriptorpb.FileOptions
	if _, err := rereadOptionByEncoding(&fileOpts, &want, vocabulary, toolv1.E_Compartments); err == nil {
		t.Fatal("re-reading accepted a malformed declaration")
	}
	if _, err := rereadOption(&fileOpts, new(descriptorpb.FileOptions), vocabulary, toolv1.E_Compartments, "f"); err == nil {
		t.Error("a malformed declaration of another garm extension was accepted")
	}
}

// compare holds rereadOption of options to re-reading them by encoding,
// and says whether it read them without re-encoding (fast).
func compare(t *testing.T, name string, options *descriptorpb.MethodOptions, fast bool) {
	t.Helper()
	want, wantErr := rereadOptionByEncoding(options, new(descriptorpb.MethodOptions), vocabulary, toolv1.E_Tool)
	before := slices.Clone(options.ProtoReflect().GetUnknown())
	got, gotErr := rereadOption(options, new(descriptorpb.MethodOptions), vocabulary, toolv1.E_Tool, "m")
	if !slices.Equal(options.ProtoReflect().GetUnknown(), before) {
		t.Errorf("%s: reading the options wrote into them", name)
	}
	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Errorf("%s: error %v, want %v", name, gotErr, wantErr)
	case (want == nil) != (got == nil) || want != nil && !proto.Equal(want, got):
		t.Errorf("%s: read %v, want %v", name, got, want)
	case want != nil && !slices.Equal(unknownFields(got.ProtoReflect(), "x"), unknownFields(want.ProtoReflect(), "x")):
		t.Errorf("%s: unknown fields %q, want %q", name, unknownFields(got.ProtoReflect(), "x"), unknownFields(want.ProtoReflect(), "x"))
	}
	if _, ok := readUndecodedOption(options.ProtoReflect(), vocabulary, toolv1.E_Tool); ok != fast {
		t.Errorf("%s: read without re-encoding: %v, want %v", name, ok, fast)
	}
}
