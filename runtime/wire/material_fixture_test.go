package wire_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// paymentDescriptor is materialtest.Payment, built here rather than generated
// so the material tests need no `make generate`. As a .proto it reads:
//
//	syntax = "proto3";
//	package materialtest;
//	enum Priority { PRIORITY_UNSPECIFIED = 0; PRIORITY_NORMAL = 1; PRIORITY_HIGH = 2; }
//	message Bank { string bic = 1; }
//	message Beneficiary { string iban = 1; string name = 2; Bank bank = 3; }
//	message Payment {
//	  int64 amount_minor_units = 1; string beneficiary_iban = 2; string currency_code = 3;
//	  Beneficiary beneficiary = 4; Priority priority = 5; bool urgent = 6;
//	  optional string memo = 7; double rate = 8; float ratio = 9; bytes blob = 10;
//	  repeated string tags = 11; map<string, string> labels = 12;
//	  repeated Beneficiary others = 13; map<string, Beneficiary> by_name = 14;
//	  int32 i32 = 15; sint32 s32 = 16; sfixed32 sf32 = 17; sint64 s64 = 18; sfixed64 sf64 = 19;
//	  uint32 u32 = 20; fixed32 f32 = 21; uint64 u64 = 22; fixed64 f64 = 23;
//	  optional int64 optional_amount = 24;
//	  oneof route { string sort_code = 25; Beneficiary via = 26; }
//	  repeated Priority priorities = 27;
//	}
var paymentDescriptor = func() protoreflect.MessageDescriptor {
	type fdp = descriptorpb.FieldDescriptorProto
	const (
		optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		repeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	)
	field := func(name string, number int32, typ descriptorpb.FieldDescriptorProto_Type, typeName string) *fdp {
		f := &fdp{Name: proto.String(name), Number: proto.Int32(number), Type: typ.Enum(), Label: optional.Enum()}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	list := func(f *fdp) *fdp { f.Label = repeated.Enum(); return f }
	inOneof := func(f *fdp, index int32, synthetic bool) *fdp {
		f.OneofIndex = proto.Int32(index)
		if synthetic {
			f.Proto3Optional = proto.Bool(true)
		}
		return f
	}
	mapEntry := func(name string, value *fdp) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{
			Name:    proto.String(name),
			Field:   []*fdp{field("key", 1, descriptorpb.FieldDescriptorProto_TYPE_STRING, ""), value},
			Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
		}
	}
	const (
		str  = descriptorpb.FieldDescriptorProto_TYPE_STRING
		msg  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		enum = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	)
	file := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("garm/wire/materialtest.proto"),
		Package: proto.String("materialtest"),
		Syntax:  proto.String("proto3"),
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Priority"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("PRIORITY_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("PRIORITY_NORMAL"), Number: proto.Int32(1)},
				{Name: proto.String("PRIORITY_HIGH"), Number: proto.Int32(2)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Bank"), Field: []*fdp{field("bic", 1, str, "")}},
			{Name: proto.String("Beneficiary"), Field: []*fdp{
				field("iban", 1, str, ""), field("name", 2, str, ""), field("bank", 3, msg, ".materialtest.Bank"),
			}},
			{
				Name: proto.String("Payment"),
				Field: []*fdp{
					field("amount_minor_units", 1, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""),
					field("beneficiary_iban", 2, str, ""),
					field("currency_code", 3, str, ""),
					field("beneficiary", 4, msg, ".materialtest.Beneficiary"),
					field("priority", 5, enum, ".materialtest.Priority"),
					field("urgent", 6, descriptorpb.FieldDescriptorProto_TYPE_BOOL, ""),
					inOneof(field("memo", 7, str, ""), 1, true),
					field("rate", 8, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, ""),
					field("ratio", 9, descriptorpb.FieldDescriptorProto_TYPE_FLOAT, ""),
					field("blob", 10, descriptorpb.FieldDescriptorProto_TYPE_BYTES, ""),
					list(field("tags", 11, str, "")),
					list(field("labels", 12, msg, ".materialtest.Payment.LabelsEntry")),
					list(field("others", 13, msg, ".materialtest.Beneficiary")),
					list(field("by_name", 14, msg, ".materialtest.Payment.ByNameEntry")),
					field("i32", 15, descriptorpb.FieldDescriptorProto_TYPE_INT32, ""),
					field("s32", 16, descriptorpb.FieldDescriptorProto_TYPE_SINT32, ""),
					field("sf32", 17, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32, ""),
					field("s64", 18, descriptorpb.FieldDescriptorProto_TYPE_SINT64, ""),
					field("sf64", 19, descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, ""),
					field("u32", 20, descriptorpb.FieldDescriptorProto_TYPE_UINT32, ""),
					field("f32", 21, descriptorpb.FieldDescriptorProto_TYPE_FIXED32, ""),
					field("u64", 22, descriptorpb.FieldDescriptorProto_TYPE_UINT64, ""),
					field("f64", 23, descriptorpb.FieldDescriptorProto_TYPE_FIXED64, ""),
					inOneof(field("optional_amount", 24, descriptorpb.FieldDescriptorProto_TYPE_INT64, ""), 2, true),
					inOneof(field("sort_code", 25, str, ""), 0, false),
					inOneof(field("via", 26, msg, ".materialtest.Beneficiary"), 0, false),
					list(field("priorities", 27, enum, ".materialtest.Priority")),
				},
				NestedType: []*descriptorpb.DescriptorProto{
					mapEntry("LabelsEntry", field("value", 2, str, "")),
					mapEntry("ByNameEntry", field("value", 2, msg, ".materialtest.Beneficiary")),
				},
				// Synthetic oneofs (proto3 optional) come after the real ones.
				OneofDecl: []*descriptorpb.OneofDescriptorProto{
					{Name: proto.String("route")}, {Name: proto.String("_memo")}, {Name: proto.String("_optional_amount")},
				},
			},
		},
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		panic("material fixture: " + err.Error())
	}
	return fd.Messages().ByName("Payment")
}()

// newPayment is an empty materialtest.Payment with the given fields set: each
// key a dotted path (messages on the way are created), each value a Go value
// protoreflect.ValueOf accepts, or a protoreflect.EnumNumber.
func newPayment(t testing.TB, fields map[string]any) *dynamicpb.Message {
	t.Helper()
	m := dynamicpb.NewMessage(paymentDescriptor)
	for path, v := range fields {
		var target protoreflect.Message = m
		segments := strings.Split(path, ".")
		for _, segment := range segments[:len(segments)-1] {
			fd := target.Descriptor().Fields().ByName(protoreflect.Name(segment))
			if fd == nil {
				t.Fatalf("fixture: no field %q on the way to %q", segment, path)
			}
			target = target.Mutable(fd).Message()
		}
		fd := target.Descriptor().Fields().ByName(protoreflect.Name(segments[len(segments)-1]))
		if fd == nil {
			t.Fatalf("fixture: no field %q", path)
		}
		target.Set(fd, protoreflect.ValueOf(v))
	}
	return m
}
