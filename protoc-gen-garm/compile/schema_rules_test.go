package compile_test

import (
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// rule declares an optional string field 1 with the given string rules.
func stringRules(rules string) string {
	return `optional string v = 1 [(buf.validate.field).string = {` + rules + `}];`
}

const (
	emailRE    = "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$"
	hostnameRE = `^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\\.?$`
	ipv4Octet  = `(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])`
)

func TestStringRulesBecomeKeywords(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"min_len and max_len count code points, as JSON Schema does", stringRules(`min_len: 2, max_len: 5`), `{"maxLength":5,"minLength":2,"type":"string"}`},
		{"len is both", stringRules(`len: 3`), `{"maxLength":3,"minLength":3,"type":"string"}`},
		{"pattern in the common subset is kept", stringRules(`pattern: "^[a-z]+$"`), `{"pattern":"^[a-z]+$","type":"string"}`},
		{"pattern is rewritten where RE2 differs", stringRules(`pattern: "^\\S.*$"`), `{"pattern":"^[^\\t\\n\\f\\r ][^\\n]*$","type":"string"}`},
		{"prefix, suffix and contains are quoted patterns", stringRules(`prefix: "a.", suffix: "$z", contains: "+"`), `{"allOf":[{"pattern":"\\$z$"},{"pattern":"\\+"}],"pattern":"^a\\.","type":"string"}`},
		{"not_contains", stringRules(`not_contains: "?"`), `{"not":{"pattern":"\\?"},"type":"string"}`},
		{"in and not_in", stringRules(`in: ["a", "b"], not_in: ["c"]`), `{"enum":["a","b"],"not":{"enum":["c"]},"type":"string"}`},
		{"const", stringRules(`const: "x"`), `{"const":"x","type":"string"}`},
		{"email is protovalidate's own check", stringRules(`email: true`), `{"format":"email","pattern":"` + emailRE + `","type":"string"}`},
		{"hostname with its length and last label", stringRules(`hostname: true`), `{"allOf":[{"anyOf":[{"maxLength":253},{"maxLength":254,"pattern":"\\.$"}]},{"pattern":"[a-zA-Z-][0-9]*\\.?$"}],"format":"hostname","pattern":"` + hostnameRE + `","type":"string"}`},
		{"uuid", stringRules(`uuid: true`), `{"format":"uuid","pattern":"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$","type":"string"}`},
		{"tuuid", stringRules(`tuuid: true`), `{"pattern":"^[0-9a-fA-F]{32}$","type":"string"}`},
		{"ulid", stringRules(`ulid: true`), `{"pattern":"^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$","type":"string"}`},
		{"ipv4", stringRules(`ipv4: true`), `{"format":"ipv4","pattern":"^` + ipv4Octet + `\\.` + ipv4Octet + `\\.` + ipv4Octet + `\\.` + ipv4Octet + `$","type":"string"}`},
		{"ipv6 is a format only", stringRules(`ipv6: true`), `{"format":"ipv6","minLength":1,"type":"string"}`},
		{"uri is a format only", stringRules(`uri: true`), `{"format":"uri","minLength":1,"type":"string"}`},
		{"uri_ref is a format only and admits empty", stringRules(`uri_ref: true`), `{"format":"uri-reference","type":"string"}`},
		{"examples", stringRules(`example: "a", example: "b"`), `{"examples":["a","b"],"type":"string"}`},
		{"byte lengths have no keyword", stringRules(`min_bytes: 1, max_bytes: 9`), `{"type":"string"}`},
		{"ip, address and prefixes have no keyword", stringRules(`address: true`), `{"type":"string"}`},
		{"CEL has no keyword", `optional string v = 1 [(buf.validate.field).cel = {id: "x", expression: "this != 'x'"}];`, `{"type":"string"}`},
		{"required on a value without presence refuses the zero value", `string v = 1 [(buf.validate.field).required = true];`, `{"minLength":1,"type":"string"}`},
		{"required with presence is the parent's required", `optional string v = 1 [(buf.validate.field).required = true];`, `{"type":"string"}`},
		{"ignored when zero admits the zero value beside the rules", `string v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).string = {email: true}];`, `{"anyOf":[{"const":""},{"format":"email","pattern":"` + emailRE + `"}],"type":"string"}`},
		{"ignoring zero is a no-op for a field with presence", `optional string v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).string.min_len = 3];`, `{"minLength":3,"type":"string"}`},
		{"ignored always leaves no keyword", `string v = 1 [(buf.validate.field).ignore = IGNORE_ALWAYS, (buf.validate.field).string.min_len = 3];`, `{"type":"string"}`},
		{"a message oneof rule's member ignores its zero value", "string v = 1 [(buf.validate.field).string.min_len = 3];\n  optional string w = 2;\n  option (buf.validate.message).oneof = {fields: [\"v\", \"w\"]};", `{"anyOf":[{"const":""},{"minLength":3}],"type":"string"}`},
		{"required and ignored when zero: zero is still refused", `string v = 1 [(buf.validate.field).required = true, (buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).string.min_len = 3];`, `{"anyOf":[{"const":""},{"minLength":3}],"minLength":1,"type":"string"}`},
	})
}

func TestNumericRulesBecomeBoundsOrPatterns(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"int32 gt and lt become an integer range", `optional int32 v = 1 [(buf.validate.field).int32 = {gt: 0, lt: 10}];`, `{"maximum":9,"minimum":1,"type":"integer"}`},
		{"int32 gte and lte", `optional int32 v = 1 [(buf.validate.field).int32 = {gte: -5, lte: 5}];`, `{"maximum":5,"minimum":-5,"type":"integer"}`},
		{"int32 only a lower bound keeps the type's upper limit", `optional int32 v = 1 [(buf.validate.field).int32.gt = 0];`, `{"maximum":2147483647,"minimum":1,"type":"integer"}`},
		{"int32 lt below gt means outside", `optional int32 v = 1 [(buf.validate.field).int32 = {gt: 10, lt: 5}];`, `{"anyOf":[{"maximum":4},{"minimum":11}],` + int32Range + `,"type":"integer"}`},
		{"uint32 gte", `optional uint32 v = 1 [(buf.validate.field).uint32.gte = 3];`, `{"maximum":4294967295,"minimum":3,"type":"integer"}`},
		{"sint32 in and not_in", `optional sint32 v = 1 [(buf.validate.field).sint32 = {in: [1, 2], not_in: [3]}];`, `{"enum":[1,2],` + int32Range + `,"not":{"enum":[3]},"type":"integer"}`},
		{"fixed32 const", `optional fixed32 v = 1 [(buf.validate.field).fixed32.const = 7];`, `{"const":7,` + uint32Range + `,"type":"integer"}`},
		{"int32 examples", `optional int32 v = 1 [(buf.validate.field).int32.example = 4];`, `{"examples":[4],` + int32Range + `,"type":"integer"}`},
		{"int64 bounds become the pattern", `optional int64 v = 1 [(buf.validate.field).int64 = {gt: -3, lte: 120}];`, `{"format":"int64","pattern":"^(?:0|-?[12]|[3-9]|[1-9][0-9]|1[01][0-9]|120)$","type":"string"}`},
		{"uint64 lt", `optional uint64 v = 1 [(buf.validate.field).uint64.lt = 1000];`, `{"format":"uint64","pattern":"^(?:0|[1-9][0-9]{0,2})$","type":"string"}`},
		{"int64 outside a range", `optional sfixed64 v = 1 [(buf.validate.field).sfixed64 = {gte: 10, lte: -10}];`, `{"format":"int64","pattern":"^(?:[1-9][0-9]{1,17}|[1-8][0-9]{18}|9[01][0-9]{17}|92[01][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[01][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|922337203685477580[0-7]|-(?:[1-9][0-9]{1,17}|[1-8][0-9]{18}|9[01][0-9]{17}|92[01][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[01][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|922337203685477580[0-8]))$","type":"string"}`},
		{"int64 in, not_in and const are decimal strings", `optional int64 v = 1 [(buf.validate.field).int64 = {in: [5, 9007199254740993], not_in: [6], const: 5}];`, `{"const":"5","enum":["5","9007199254740993"],"format":"int64","not":{"enum":["6"]},` + int64Pattern + `,"type":"string"}`},
		{"double gt and lte", `optional double v = 1 [(buf.validate.field).double = {gt: 0, lte: 1.5}];`, `{"exclusiveMinimum":0,"maximum":1.5,"type":"number"}`},
		{"double gte only", `optional double v = 1 [(buf.validate.field).double.gte = -2.5];`, `{"maximum":1.7976931348623157e308,"minimum":-2.5,"type":"number"}`},
		{"double outside a range", `optional double v = 1 [(buf.validate.field).double = {gt: 1, lt: -1}];`, `{"anyOf":[{"exclusiveMaximum":-1},{"exclusiveMinimum":1}],` + doubleRange + `,"type":"number"}`},
		{"float bounds are spelled as float32", `optional float v = 1 [(buf.validate.field).float = {gt: 0.1, lt: 3.4e38}];`, `{"exclusiveMaximum":3.4e+38,"exclusiveMinimum":0.1,"type":"number"}`},
		{"double in, not_in and const", `optional double v = 1 [(buf.validate.field).double = {in: [0.5, 1e21], not_in: [2], const: 0.5}];`, `{"const":0.5,"enum":[0.5,1e+21],` + doubleRange + `,"not":{"enum":[2]},"type":"number"}`},
		{"finite is implied by JSON numbers", `optional double v = 1 [(buf.validate.field).double.finite = true];`, `{` + doubleRange + `,"type":"number"}`},
		{"an infinite bound on its own side bounds nothing", `optional double v = 1 [(buf.validate.field).double = {gte: -inf, lt: inf}];`, `{` + doubleRange + `,"type":"number"}`},
		{"int32 required without presence refuses zero", `int32 v = 1 [(buf.validate.field).required = true];`, `{` + int32Range + `,"not":{"const":0},"type":"integer"}`},
		{"int64 required without presence refuses \"0\"", `int64 v = 1 [(buf.validate.field).required = true];`, `{"format":"int64","not":{"const":"0"},` + int64Pattern + `,"type":"string"}`},
		{"int32 ignored when zero", `int32 v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).int32.gt = 5];`, `{"anyOf":[{"const":0},{"maximum":2147483647,"minimum":6}],` + int32Range + `,"type":"integer"}`},
		{"int64 ignored when zero", `int64 v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).int64.gt = 5];`, `{"anyOf":[{"const":"0"},{"pattern":"^(?:[6-9]|[1-9][0-9]{1,17}|[1-8][0-9]{18}|9[01][0-9]{17}|92[01][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|922337[01][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|922337203685477580[0-7])$"}],` + int64Spell + `,"type":"string"}`},
		{"bool const", `optional bool v = 1 [(buf.validate.field).bool.const = true];`, `{"const":true,"type":"boolean"}`},
		{"bool required without presence refuses false", `bool v = 1 [(buf.validate.field).required = true];`, `{"not":{"const":false},"type":"boolean"}`},
		{"wrapper rules are the wrapped kind's", `google.protobuf.Int32Value v = 1 [(buf.validate.field).int32.lt = 0];`, `{"maximum":-1,"minimum":-2147483648,"type":"integer"}`},
		{"StringValue rules", `google.protobuf.StringValue v = 1 [(buf.validate.field).string.max_len = 4];`, `{"maxLength":4,"type":"string"}`},
		{"Timestamp rules have no keyword", `google.protobuf.Timestamp v = 1 [(buf.validate.field).timestamp.lt_now = true];`, `{"format":"date-time","type":"string"}`},
		{"Duration rules have no keyword", `google.protobuf.Duration v = 1 [(buf.validate.field).duration.gt = {seconds: 1}];`, `{` + duration + `,"type":"string"}`},
		{"bytes rules have no keyword", `optional bytes v = 1 [(buf.validate.field).bytes.max_len = 4];`, `{` + base64 + `,"type":"string"}`},
	})
}

func TestEnumListAndMapRulesBecomeKeywords(t *testing.T) {
	runSchemaCases(t, []schemaCase{
		{"enum in", `optional Color v = 1 [(buf.validate.field).enum = {in: [0, 2]}];`, `{"enum":["COLOR_BLUE"],"type":"string"}`},
		{"enum not_in", `optional Color v = 1 [(buf.validate.field).enum = {not_in: [1]}];`, `{"enum":["COLOR_BLUE"],"type":"string"}`},
		{"enum const", `optional Color v = 1 [(buf.validate.field).enum.const = 1];`, `{"enum":["COLOR_RED"],"type":"string"}`},
		{"enum const zero is the zero value", `optional Color v = 1 [(buf.validate.field).enum.const = 0];`, `{"enum":["COLOR_UNSPECIFIED"],"type":"string"}`},
		{"enum defined_only is what names are", `optional Color v = 1 [(buf.validate.field).enum.defined_only = true];`, `{"enum":["COLOR_RED","COLOR_BLUE"],"type":"string"}`},
		{"enum examples are names", `optional Color v = 1 [(buf.validate.field).enum.example = 2];`, `{"enum":["COLOR_RED","COLOR_BLUE"],"examples":["COLOR_BLUE"],"type":"string"}`},
		{"item counts and unique", `repeated string v = 1 [(buf.validate.field).repeated = {min_items: 1, max_items: 3, unique: true}];`, `{"items":{"type":"string"},"maxItems":3,"minItems":1,"type":"array","uniqueItems":true}`},
		{"items rules", `repeated int32 v = 1 [(buf.validate.field).repeated.items.int32.gte = 0];`, `{"items":{"maximum":2147483647,"minimum":0,"type":"integer"},"type":"array"}`},
		{"items ignored when zero", `repeated string v = 1 [(buf.validate.field).repeated.items = {ignore: IGNORE_IF_ZERO_VALUE, string: {min_len: 2}}];`, `{"items":{"anyOf":[{"const":""},{"minLength":2}],"type":"string"},"type":"array"}`},
		{"items ignored always", `repeated string v = 1 [(buf.validate.field).repeated.items = {ignore: IGNORE_ALWAYS, string: {min_len: 2}}];`, `{"items":{"type":"string"},"type":"array"}`},
		{"a list ignored when empty", `repeated string v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).repeated.min_items = 2];`, `{"anyOf":[{"maxItems":0},{"minItems":2}],"items":{"type":"string"},"type":"array"}`},
		{"a required list is not empty", `repeated string v = 1 [(buf.validate.field).required = true];`, `{"items":{"type":"string"},"minItems":1,"type":"array"}`},
		{"pair counts", `map<string, string> v = 1 [(buf.validate.field).map = {min_pairs: 1, max_pairs: 2}];`, `{"additionalProperties":{"type":"string"},"maxProperties":2,"minProperties":1,"type":"object"}`},
		{"string keys rules", `map<string, string> v = 1 [(buf.validate.field).map.keys.string = {min_len: 1, pattern: "^[a-z]+$"}];`, `{"additionalProperties":{"type":"string"},"propertyNames":{"minLength":1,"pattern":"^[a-z]+$","type":"string"},"type":"object"}`},
		{"integer keys bounds", `map<int32, string> v = 1 [(buf.validate.field).map.keys.int32 = {gt: 0, lt: 100}];`, `{"additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^[1-9][0-9]{0,1}$","type":"string"},"type":"object"}`},
		{"bool keys const", `map<bool, string> v = 1 [(buf.validate.field).map.keys.bool.const = true];`, `{"additionalProperties":{"type":"string"},"propertyNames":{"enum":["true"],"type":"string"},"type":"object"}`},
		{"values rules", `map<string, double> v = 1 [(buf.validate.field).map.values.double.gte = 0];`, `{"additionalProperties":{"maximum":1.7976931348623157e308,"minimum":0,"type":"number"},"type":"object"}`},
		{"a required map is not empty", `map<string, string> v = 1 [(buf.validate.field).required = true];`, `{"additionalProperties":{"type":"string"},"minProperties":1,"type":"object"}`},
		{"a map ignored when empty", `map<string, string> v = 1 [(buf.validate.field).ignore = IGNORE_IF_ZERO_VALUE, (buf.validate.field).map.min_pairs = 2];`, `{"additionalProperties":{"type":"string"},"anyOf":[{"maxProperties":0},{"minProperties":2}],"type":"object"}`},
		{"list of messages with item counts", `repeated Item v = 1 [(buf.validate.field).repeated.max_items = 2];`, `{"items":{` + closed + `},"maxItems":2,"type":"array"}`},
	})
}

func TestRulesThatCannotBeMappedFaithfullyAreRefused(t *testing.T) {
	tests := []struct{ field, says string }{
		{`optional int32 v = 1 [(buf.validate.field).string.min_len = 1];`, "sets string rules on a int32 value, which takes int32 rules"},
		{`repeated string v = 1 [(buf.validate.field).string.min_len = 1];`, "sets string rules on a list"},
		{`repeated string v = 1 [(buf.validate.field).repeated.items.int32.gt = 1];`, "items: (buf.validate.field) sets int32 rules on a string value"},
		{`map<string, string> v = 1 [(buf.validate.field).map.keys.int64.gt = 1];`, "map keys: (buf.validate.field) sets int64 rules on a string map key"},
		{`Item v = 1 [(buf.validate.field).string.min_len = 1];`, "on a s.v1.Item value, which takes no typed rules"},
		{`google.protobuf.Int64Value v = 1 [(buf.validate.field).int32.gt = 1];`, "which takes int64 rules"},
		{`optional string v = 1 [(buf.validate.field).string.pattern = "(?i)abc"];`, "inline flags"},
		{`optional string v = 1 [(buf.validate.field).string.pattern = "[[:alpha:]]"];`, "ECMA-262"},
		{`optional int32 v = 1 [(buf.validate.field).int32.gt = 2147483647];`, "the bounds admit no value"},
		{`optional uint64 v = 1 [(buf.validate.field).uint64 = {gt: 10, lt: 11}];`, "the bounds admit no value"},
		{`optional Color v = 1 [(buf.validate.field).enum = {in: [7]}];`, "no named value of s.v1.Color"},
		{`optional double v = 1 [(buf.validate.field).double.gt = nan];`, "has no JSON spelling"},
		{`Color v = 1 [(buf.validate.field).required = true, (buf.validate.field).enum.const = 0];`, "admit only the zero value"},
	}
	for _, tt := range tests {
		_, err := compile.FieldSchema(fieldOne(t, tt.field))
		if err == nil {
			t.Errorf("FieldSchema(%s) accepted it", tt.field)
			continue
		}
		if !strings.Contains(err.Error(), tt.says) {
			t.Errorf("FieldSchema(%s) = %v\nwant it to say %q", tt.field, err, tt.says)
		}
	}
}

// withRawStringRules compiles an optional string field and appends raw inside
// its (buf.validate.field).string rules, as a newer protovalidate would write
// them.
func withRawStringRules(t *testing.T, raw []byte) protoreflect.FieldDescriptor {
	t.Helper()
	const src = "syntax = \"proto3\";\npackage r.v1;\nimport \"buf/validate/validate.proto\";\nmessage M { optional string v = 1 [(buf.validate.field).string.min_len = 2]; }\n"
	compiled := fixture.Compile(t, map[string]string{"r.proto": src}, nil, "r.proto")[0]
	fdp := protodesc.ToFileDescriptorProto(compiled)
	stringRules := protowire.AppendTag(nil, 14, protowire.BytesType) // FieldRules.string
	stringRules = protowire.AppendBytes(stringRules, raw)
	field := protowire.AppendTag(nil, 1159, protowire.BytesType) // (buf.validate.field)
	field = protowire.AppendBytes(field, stringRules)
	opts := fdp.GetMessageType()[0].GetField()[0].GetOptions().ProtoReflect()
	opts.SetUnknown(append(opts.GetUnknown(), field...))
	deps := new(protoregistry.Files)
	var register func(protoreflect.FileDescriptor)
	register = func(f protoreflect.FileDescriptor) {
		if _, err := deps.FindFileByPath(f.Path()); err == nil {
			return
		}
		for i := 0; i < f.Imports().Len(); i++ {
			register(f.Imports().Get(i).FileDescriptor)
		}
		if err := deps.RegisterFile(f); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < compiled.Imports().Len(); i++ {
		register(compiled.Imports().Get(i).FileDescriptor)
	}
	f, err := protodesc.NewFile(fdp, deps)
	if err != nil {
		t.Fatal(err)
	}
	return f.Messages().Get(0).Fields().Get(0)
}

func TestARuleThisBuildCannotReadIsRefusedAndAPredefinedRuleIsSkipped(t *testing.T) {
	varint := func(num protowire.Number) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), 1)
	}
	if got, err := compile.FieldSchema(withRawStringRules(t, nil)); err != nil || got != `{"minLength":2,"type":"string"}` {
		t.Fatalf("the untouched round trip = %s, %v", got, err)
	}
	_, err := compile.FieldSchema(withRawStringRules(t, varint(99)))
	if err == nil || !strings.Contains(err.Error(), "buf.validate.field.string: field 99") || !strings.Contains(err.Error(), "r.v1.M.v") {
		t.Errorf("an unknown StringRules field 99: err = %v, want it refused naming the field and the rule", err)
	}
	// 1000 and up is StringRules' extension range: a predefined rule, CEL.
	got, err := compile.FieldSchema(withRawStringRules(t, varint(1000)))
	if err != nil || got != `{"minLength":2,"type":"string"}` {
		t.Errorf("a predefined rule: %s, %v; want it skipped", got, err)
	}
}
