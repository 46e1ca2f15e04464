package compile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// schemaFile is the file every schema fixture's message M lives in: every
// import a field may need, two enums and two messages to refer to.
const schemaFile = `syntax = "proto3";
package s.v1;
import "buf/validate/validate.proto";
import "google/protobuf/any.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "garm/card/v1/card.proto";

enum Color {
  COLOR_UNSPECIFIED = 0;
  COLOR_RED = 1;
  COLOR_BLUE = 2;
}
enum Only {
  ONLY_UNSPECIFIED = 0;
}
message Item {
  string name = 1;
}
message Choice {
  oneof pick {
    string a = 1;
    Item b = 2;
  }
}
`

// messageM compiles schemaFile with message M declared by body.
func messageM(t *testing.T, body string) protoreflect.MessageDescriptor {
	t.Helper()
	src := schemaFile + "message M {\n" + body + "\n}\n"
	files := fixture.Compile(t, map[string]string{"s/v1/s.proto": src}, nil, "s/v1/s.proto")
	return files[0].Messages().ByName("M")
}

// fieldOne is field number 1 of M.
func fieldOne(t *testing.T, body string) protoreflect.FieldDescriptor {
	t.Helper()
	fd := messageM(t, body).Fields().ByNumber(1)
	if fd == nil {
		t.Fatalf("fixture has no field 1:\n%s", body)
	}
	return fd
}

const (
	int32Range   = `"maximum":2147483647,"minimum":-2147483648`
	uint32Range  = `"maximum":4294967295,"minimum":0`
	int64Spell   = `"format":"int64",` + int64Pattern
	int64Pattern = `"pattern":"^(?:0|-?(?:[1-9][0-9]{0,17}|[1-8][0-9]{18}|9[01][0-9]{17}|92[01][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[01][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|922337203685477580[0-7])|-9223372036854775808)$"`
	uint64Spell  = `"format":"uint64","pattern":"^(?:0|[1-9][0-9]{0,18}|1[0-7][0-9]{18}|18[0-3][0-9]{17}|184[0-3][0-9]{16}|1844[0-5][0-9]{15}|18446[0-6][0-9]{14}|184467[0-3][0-9]{13}|1844674[0-3][0-9]{12}|184467440[0-6][0-9]{10}|1844674407[0-2][0-9]{9}|18446744073[0-6][0-9]{8}|1844674407370[0-8][0-9]{6}|18446744073709[0-4][0-9]{5}|184467440737095[0-4][0-9]{4}|18446744073709550[0-9]{3}|18446744073709551[0-5][0-9]{2}|1844674407370955160[0-9]|1844674407370955161[0-5])$"`
	int32Keys    = `"pattern":"^(?:0|-?(?:[1-9][0-9]{0,8}|1[0-9]{9}|20[0-9]{8}|21[0-3][0-9]{7}|214[0-6][0-9]{6}|2147[0-3][0-9]{5}|21474[0-7][0-9]{4}|214748[0-2][0-9]{3}|2147483[0-5][0-9]{2}|21474836[0-3][0-9]|214748364[0-7])|-2147483648)$"`
	floatRange   = `"maximum":3.4028235e38,"minimum":-3.4028235e38`
	doubleRange  = `"maximum":1.7976931348623157e308,"minimum":-1.7976931348623157e308`
	base64       = `"contentEncoding":"base64","pattern":"^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?|(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}(?:==)?|[A-Za-z0-9_-]{3}=?)?)$"`
	closed       = `"additionalProperties":false,"type":"object"`
	duration     = `"pattern":"^-?(?:0|[1-9][0-9]{0,10}|[12][0-9]{11}|30[0-9]{10}|31[0-4][0-9]{9}|315[0-4][0-9]{8}|3155[0-6][0-9]{7}|31557[0-5][0-9]{6}|315576000000)(?:\\.[0-9]{1,9})?s$"`
)

type schemaCase struct {
	name, field, want string
}

func runSchemaCases(t *testing.T, tests []schemaCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compile.FieldSchema(fieldOne(t, tt.field))
			if err != nil {
				t.Fatalf("FieldSchema(%s): %v", tt.field, err)
			}
			if got != tt.want {
				t.Errorf("FieldSchema(%s)\n got: %s\nwant: %s", tt.field, got, tt.want)
			}
		})
	}
}

func TestFieldSchemaFollowsProtojsonForEveryScalarKind(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"bool", `bool v = 1;`, `{"type":"boolean"}`},
		{"int32", `int32 v = 1;`, `{` + int32Range + `,"type":"integer"}`},
		{"sint32", `sint32 v = 1;`, `{` + int32Range + `,"type":"integer"}`},
		{"sfixed32", `sfixed32 v = 1;`, `{` + int32Range + `,"type":"integer"}`},
		{"uint32", `uint32 v = 1;`, `{` + uint32Range + `,"type":"integer"}`},
		{"fixed32", `fixed32 v = 1;`, `{` + uint32Range + `,"type":"integer"}`},
		{"int64", `int64 v = 1;`, `{` + int64Spell + `,"type":"string"}`},
		{"sint64", `sint64 v = 1;`, `{` + int64Spell + `,"type":"string"}`},
		{"sfixed64", `sfixed64 v = 1;`, `{` + int64Spell + `,"type":"string"}`},
		{"uint64", `uint64 v = 1;`, `{` + uint64Spell + `,"type":"string"}`},
		{"fixed64", `fixed64 v = 1;`, `{` + uint64Spell + `,"type":"string"}`},
		{"float", `float v = 1;`, `{` + floatRange + `,"type":"number"}`},
		{"double", `double v = 1;`, `{` + doubleRange + `,"type":"number"}`},
		{"string", `string v = 1;`, `{"type":"string"}`},
		{"bytes", `bytes v = 1;`, `{` + base64 + `,"type":"string"}`},
		{"optional keeps the same shape", `optional int32 v = 1;`, `{` + int32Range + `,"type":"integer"}`},
		{"enum without its zero value", `Color v = 1;`, `{"enum":["COLOR_RED","COLOR_BLUE"],"type":"string"}`},
		{"enum whose zero value is its only one", `Only v = 1;`, `{"enum":["ONLY_UNSPECIFIED"],"type":"string"}`},
		{"description is the leading comment", "// The colour.\n  // Second line.\n  Color v = 1;", `{"description":"The colour.\nSecond line.","enum":["COLOR_RED","COLOR_BLUE"],"type":"string"}`},
	})
}

func TestFieldSchemaForListsMapsAndMessages(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"list of scalars", `repeated int32 v = 1;`, `{"items":{` + int32Range + `,"type":"integer"},"type":"array"}`},
		{"list of enums", `repeated Color v = 1;`, `{"items":{"enum":["COLOR_RED","COLOR_BLUE"],"type":"string"},"type":"array"}`},
		{"list of messages leaves the element open for its children", `repeated Item v = 1;`, `{"items":{` + closed + `},"type":"array"}`},
		{"message", `Item v = 1;`, `{` + closed + `}`},
		{"message with a oneof carries its exclusivity", `Choice v = 1;`, `{"additionalProperties":false,"allOf":[{"not":{"required":["a","b"]}}],"type":"object"}`},
		{"map of strings needs no key schema", `map<string, int64> v = 1;`, `{"additionalProperties":{` + int64Spell + `,"type":"string"},"type":"object"}`},
		{"int32 keys are spelled in decimal", `map<int32, string> v = 1;`, `{"additionalProperties":{"type":"string"},"propertyNames":{` + int32Keys + `,"type":"string"},"type":"object"}`},
		{"uint64 keys", `map<uint64, bool> v = 1;`, `{"additionalProperties":{"type":"boolean"},"propertyNames":{"pattern":"^(?:0|[1-9][0-9]{0,18}|1[0-7][0-9]{18}|18[0-3][0-9]{17}|184[0-3][0-9]{16}|1844[0-5][0-9]{15}|18446[0-6][0-9]{14}|184467[0-3][0-9]{13}|1844674[0-3][0-9]{12}|184467440[0-6][0-9]{10}|1844674407[0-2][0-9]{9}|18446744073[0-6][0-9]{8}|1844674407370[0-8][0-9]{6}|18446744073709[0-4][0-9]{5}|184467440737095[0-4][0-9]{4}|18446744073709550[0-9]{3}|18446744073709551[0-5][0-9]{2}|1844674407370955160[0-9]|1844674407370955161[0-5])$","type":"string"},"type":"object"}`},
		{"bool keys", `map<bool, string> v = 1;`, `{"additionalProperties":{"type":"string"},"propertyNames":{"enum":["false","true"],"type":"string"},"type":"object"}`},
		{"map of messages leaves the value open for its children", `map<string, Item> v = 1;`, `{"additionalProperties":{` + closed + `},"type":"object"}`},
		{"map of opaque messages is a leaf", `map<string, google.protobuf.Duration> v = 1;`, `{"additionalProperties":{` + duration + `,"type":"string"},"type":"object"}`},
		{"map of Value admits any JSON value", `map<string, google.protobuf.Value> v = 1;`, `{"additionalProperties":true,"type":"object"}`},
	})
}

func TestFieldSchemaForWellKnownTypes(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"Timestamp", `google.protobuf.Timestamp v = 1;`, `{"format":"date-time","type":"string"}`},
		{"Duration", `google.protobuf.Duration v = 1;`, `{` + duration + `,"type":"string"}`},
		{"DoubleValue", `google.protobuf.DoubleValue v = 1;`, `{` + doubleRange + `,"type":"number"}`},
		{"FloatValue", `google.protobuf.FloatValue v = 1;`, `{` + floatRange + `,"type":"number"}`},
		{"Int64Value", `google.protobuf.Int64Value v = 1;`, `{` + int64Spell + `,"type":"string"}`},
		{"UInt64Value", `google.protobuf.UInt64Value v = 1;`, `{` + uint64Spell + `,"type":"string"}`},
		{"Int32Value", `google.protobuf.Int32Value v = 1;`, `{` + int32Range + `,"type":"integer"}`},
		{"UInt32Value", `google.protobuf.UInt32Value v = 1;`, `{` + uint32Range + `,"type":"integer"}`},
		{"BoolValue", `google.protobuf.BoolValue v = 1;`, `{"type":"boolean"}`},
		{"StringValue", `google.protobuf.StringValue v = 1;`, `{"type":"string"}`},
		{"BytesValue", `google.protobuf.BytesValue v = 1;`, `{` + base64 + `,"type":"string"}`},
		{"Struct", `google.protobuf.Struct v = 1;`, `{"type":"object"}`},
		{"Value", `google.protobuf.Value v = 1;`, `{}`},
		{"Value with a description", "// Anything.\n google.protobuf.Value v = 1;", `{"description":"Anything."}`},
		{"ListValue", `google.protobuf.ListValue v = 1;`, `{"type":"array"}`},
		{"Empty", `google.protobuf.Empty v = 1;`, `{` + closed + `}`},
		{"Any", `google.protobuf.Any v = 1;`, `{"properties":{"@type":{"type":"string"}},"type":"object"}`},
		{"FieldMask", `google.protobuf.FieldMask v = 1;`, `{"type":"string"}`},
		{"NullValue", `optional google.protobuf.NullValue v = 1;`, `{"type":"null"}`},
		{"list of Timestamps", `repeated google.protobuf.Timestamp v = 1;`, `{"items":{"format":"date-time","type":"string"},"type":"array"}`},
	})
}

func TestACardIsWrittenOutWholeAsAClosedObject(t *testing.T) {
	got, err := compile.FieldSchema(fieldOne(t, `garm.card.v1.Card v = 1;`))
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		Type                 string                     `json:"type"`
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Required             []string                   `json:"required"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(got), &card); err != nil {
		t.Fatal(err)
	}
	if card.Type != "object" || card.AdditionalProperties == nil || *card.AdditionalProperties || len(card.Required) != 0 {
		t.Errorf("Card is not a closed object with nothing required: %s", got)
	}
	want := map[string]string{
		"kind":       `{"enum":["KIND_START","KIND_RECORD","KIND_LIST","KIND_FORM","KIND_CONFIRMATION","KIND_RESULT"],"type":"string"}`,
		"title":      `{"type":"string"}`,
		"disclosure": `{"additionalProperties":false,"properties":{"withheld_fields":{"items":{"type":"string"},"type":"array"}},"type":"object"}`,
	}
	for name, schema := range want {
		if string(card.Properties[name]) != schema {
			t.Errorf("Card.%s = %s, want %s", name, card.Properties[name], schema)
		}
	}
	if len(card.Properties) != 10 {
		t.Errorf("Card has %d properties, want its 10 fields", len(card.Properties))
	}
	// Element and Section recurse into each other: the cut is an open object.
	if !strings.Contains(got, `"elements":{"items":{"type":"object"},"type":"array"}`) {
		t.Errorf("Section.elements is not cut to an open object: %s", got)
	}
	if !strings.Contains(got, `{"not":{"required":["text","facts"]}}`) {
		t.Errorf("Element's oneof is not exclusive: %s", got)
	}
}

func TestMessageSchemaIsAClosedShellOrAnOpaqueTypesWholeSchema(t *testing.T) {
	md := messageM(t, `
  oneof a { string x = 1; int32 y = 2; string z = 3; }
  oneof b {
    option (buf.validate.oneof).required = true;
    string p = 4;
    string q = 5;
  }
  optional string lone = 6;`)
	got, err := compile.MessageSchema(md)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"allOf":[{"not":{"required":["x","y"]}},{"not":{"required":["x","z"]}},{"not":{"required":["y","z"]}},{"not":{"required":["p","q"]}},{"anyOf":[{"required":["p"]},{"required":["q"]}]}],"type":"object"}`
	if got != want {
		t.Errorf("MessageSchema\n got: %s\nwant: %s", got, want)
	}

	documented := fixture.Compile(t, map[string]string{"d.proto": "syntax = \"proto3\";\npackage d;\n// Doc is documented.\nmessage Doc { string a = 1; }\n"}, nil, "d.proto")[0].Messages().ByName("Doc")
	if got, _ := compile.MessageSchema(documented); got != `{"additionalProperties":false,"description":"Doc is documented.","type":"object"}` {
		t.Errorf("MessageSchema(Doc) = %s", got)
	}

	for name, want := range map[protoreflect.FullName]string{
		"google.protobuf.Empty":     `{` + closed + `}`,
		"google.protobuf.Timestamp": `{"format":"date-time","type":"string"}`,
		"google.protobuf.Struct":    `{"type":"object"}`,
	} {
		opaque := md.ParentFile().Imports()
		var found protoreflect.MessageDescriptor
		for i := 0; i < opaque.Len(); i++ {
			if d := opaque.Get(i).FileDescriptor.Messages().ByName(name.Name()); d != nil && d.FullName() == name {
				found = d
			}
		}
		if found == nil {
			t.Fatalf("fixture does not import %s", name)
		}
		if got, err := compile.MessageSchema(found); err != nil || got != want {
			t.Errorf("MessageSchema(%s) = %s, %v; want %s", name, got, err, want)
		}
	}
}

func TestMessageLevelOneofRulesAreMappedOnlyOverFieldsWithPresence(t *testing.T) {
	mapped := messageM(t, `
  option (buf.validate.message).oneof = {fields: ["a", "b"], required: true};
  optional string a = 1;
  Item b = 2;
  optional string c = 3;`)
	got, err := compile.MessageSchema(mapped)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"additionalProperties":false,"allOf":[{"not":{"required":["a","b"]}},{"anyOf":[{"required":["a"]},{"required":["b"]}]}],"type":"object"}`; got != want {
		t.Errorf("MessageSchema\n got: %s\nwant: %s", got, want)
	}
	// With an implicit-presence member "set" means "not zero": left to garmd.
	unmapped := messageM(t, `
  option (buf.validate.message).oneof = {fields: ["a", "b"]};
  string a = 1;
  optional string b = 2;`)
	if got, _ := compile.MessageSchema(unmapped); got != `{`+closed+`}` {
		t.Errorf("MessageSchema = %s, want the plain shell", got)
	}
}

func TestFieldRequired(t *testing.T) {
	tests := []struct {
		field string
		want  bool
	}{
		{`string v = 1;`, true},
		{`int32 v = 1;`, true},
		{`Color v = 1;`, true},
		{`optional string v = 1;`, false},
		{`repeated string v = 1;`, false},
		{`map<string, string> v = 1;`, false},
		{`Item v = 1;`, false},
		{`google.protobuf.Timestamp v = 1;`, false},
		{`oneof o { string v = 1; }`, false},
		{`optional string v = 1 [(buf.validate.field).required = true];`, true},
		{`Item v = 1 [(buf.validate.field).required = true];`, true},
		{`repeated string v = 1 [(buf.validate.field).required = true];`, true},
		{`oneof o { string v = 1 [(buf.validate.field).required = true]; }`, true},
		{`optional string v = 1 [(buf.validate.field).required = true, (buf.validate.field).ignore = IGNORE_ALWAYS];`, false},
		{`string v = 1 [(buf.validate.field).ignore = IGNORE_ALWAYS];`, true},
		{`optional string v = 1 [(buf.validate.field).string.min_len = 1];`, false},
		// Absent is empty for a list or map, and protovalidate checks the empty one.
		{`repeated string v = 1 [(buf.validate.field).repeated.min_items = 1];`, true},
		{`repeated string v = 1 [(buf.validate.field).repeated.max_items = 1];`, false},
		{`repeated string v = 1 [(buf.validate.field).repeated.min_items = 1, (buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE];`, false},
		{`map<string, string> v = 1 [(buf.validate.field).map.min_pairs = 2];`, true},
		{`map<string, string> v = 1 [(buf.validate.field).map.min_pairs = 2, (buf.validate.field).ignore = IGNORE_ALWAYS];`, false},
	}
	for _, tt := range tests {
		if got := compile.FieldRequired(fieldOne(t, tt.field)); got != tt.want {
			t.Errorf("FieldRequired(%s) = %v, want %v", tt.field, got, tt.want)
		}
	}
	proto2 := fixture.Compile(t, map[string]string{"p2.proto": "syntax = \"proto2\";\npackage p2;\nmessage M { required string a = 1; optional string b = 2; }\n"}, nil, "p2.proto")[0].Messages().ByName("M")
	if !compile.FieldRequired(proto2.Fields().ByName("a")) || compile.FieldRequired(proto2.Fields().ByName("b")) {
		t.Error("proto2: required must be required and optional not")
	}
}
