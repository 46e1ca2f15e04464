package codec_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/daemon/internal/codec"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// requiredFixture is a proto2 contract with a required field of its own
// (name), one in a nested message (inner.x), one in a map's values
// (byKey[*].x), and a contract with none.
func requiredFixture(t *testing.T) (withRequired, without protoreflect.MessageDescriptor) {
	t.Helper()
	opt, req := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), descriptorpb.FieldDescriptorProto_LABEL_REQUIRED.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	str, i32, msg := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(), descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	field := func(name string, n int32, label *descriptorpb.FieldDescriptorProto_Label, typ *descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(n), Label: label, Type: typ}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: proto.String("req.proto"), Package: proto.String("req"), Syntax: proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Inner"), Field: []*descriptorpb.FieldDescriptorProto{field("x", 1, req, i32, "")}},
			{Name: proto.String("Outer"), Field: []*descriptorpb.FieldDescriptorProto{
				field("name", 1, req, str, ""),
				field("inner", 2, opt, msg, ".req.Inner"),
				field("byKey", 3, rep, msg, ".req.Outer.ByKeyEntry"),
			}, NestedType: []*descriptorpb.DescriptorProto{{
				Name:    proto.String("ByKeyEntry"),
				Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, opt, str, ""), field("value", 2, opt, msg, ".req.Inner")},
				Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
			}}},
			{Name: proto.String("Plain"), Field: []*descriptorpb.FieldDescriptorProto{field("note", 1, opt, str, "")}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Outer"), fd.Messages().ByName("Plain")
}

// A request that leaves a required field unset is refused, however deep
// the field is and in either encoding; the check is skipped only for a
// contract that has no required field, where it could find nothing.
func TestARequestMissingARequiredFieldIsRefused(t *testing.T) {
	outer, plain := requiredFixture(t)
	for _, tc := range []struct {
		json string
		ok   bool
	}{
		{`{"name":"n"}`, true},
		{`{"inner":{"x":1}}`, false},
		{`{"name":"n","inner":{}}`, false},
		{`{"name":"n","inner":{"x":1},"byKey":{"k":{"x":2}}}`, true},
		{`{"name":"n","byKey":{"k":{}}}`, false},
	} {
		_, err := codec.DecodeRequest(outer, []byte(tc.json), true)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "required field")) {
			t.Errorf("JSON %s: %v, want accepted=%v (refusals naming the required field)", tc.json, err, tc.ok)
		}
		// The same request in binary: encode it partially, then decode.
		partial := dynamicpb.NewMessage(outer)
		if err := (protojson.UnmarshalOptions{AllowPartial: true}).Unmarshal([]byte(tc.json), partial); err != nil {
			t.Fatal(err)
		}
		bin, err := proto.MarshalOptions{AllowPartial: true}.Marshal(partial)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := codec.DecodeRequest(outer, bin, false); (err == nil) != tc.ok {
			t.Errorf("binary of %s: %v, want accepted=%v", tc.json, err, tc.ok)
		}
	}
	if _, err := codec.DecodeRequest(plain, []byte(`{"note":"n"}`), true); err != nil {
		t.Errorf("a contract with no required field: %v", err)
	}
}
