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
