package compile_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
)

// sha256Hex is design 4.4's hash of a canonical text, computed here rather
// than by the code under test.
func sha256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// hashesOf builds the named files and returns each package's hash by name.
func hashesOf(t *testing.T, sources map[string]string, files ...string) map[string]string {
	t.Helper()
	hashes := map[string]string{}
	for _, pkg := range build(t, sources, files...).Packages {
		hashes[string(pkg.Name)] = pkg.DescriptorHash
	}
	return hashes
}

// shopProto has three tools over two services, with an excluded and an
// undeclared method between them whose messages must not be hashed.
const shopProto = `syntax = "proto3";
package shop.v1;
import "garm/tool/v1/tool.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";

service Orders {
  rpc PlaceOrder(PlaceOrderRequest) returns (Order) {
    option (garm.tool.v1.tool) = {description: "Places an order."};
  }
  rpc Purge(PurgeRequest) returns (PurgeResponse) {
    option (garm.tool.v1.tool) = {exclude: true};
  }
  rpc Peek(PeekRequest) returns (PeekResponse);
  rpc GetOrder(GetOrderRequest) returns (Order) {
    option (garm.tool.v1.tool) = {description: "Reads an order."};
  }
}

service Reports {
  rpc Summarize(SummarizeRequest) returns (Summary) {
    option (garm.tool.v1.tool) = {description: "Summarizes orders."};
  }
}

enum Status {
  STATUS_UNSPECIFIED = 0;
  STATUS_OPEN = 1;
}

message Money {
  int64 units = 2;
  string currency = 1;
}

message PlaceOrderRequest {
  message Line {
    int32 quantity = 2;
    string sku = 1;
  }
  repeated Line lines = 3;
  string customer = 1;
  map<string, Money> prices = 2;
  google.protobuf.Struct metadata = 5;
  optional string note = 4;
}

message Order {
  PlaceOrderRequest.Line first_line = 5;
  google.protobuf.Timestamp placed_at = 4;
  Money total = 3;
  Status status = 2;
  string id = 1;
}

message GetOrderRequest {
  string id = 1;
}

message SummarizeRequest {
  google.protobuf.Timestamp since = 1;
  Money threshold = 2;
}

message Summary {
  repeated Order orders = 1;
  Money total = 2;
}

message PurgeRequest { string everything = 1; }
message PurgeResponse { int64 purged = 1; }
message PeekRequest { string secret = 1; }
message PeekResponse { bytes contents = 1; }
`

// shopCanonical is shopProto's canonical text, written out by hand from
// design 4.4: tools in declaration order (PlaceOrder, GetOrder, Summarize),
// input then output, fields by number, message-typed fields' messages
// visited depth first in field order, each message once.
const shopCanonical = `message shop.v1.PlaceOrderRequest
field 1 customer optional string
field 2 prices repeated message
field 3 lines repeated message
field 4 note optional string
field 5 metadata optional message
message shop.v1.PlaceOrderRequest.PricesEntry
field 1 key optional string
field 2 value optional message
message shop.v1.Money
field 1 currency optional string
field 2 units optional int64
message shop.v1.PlaceOrderRequest.Line
field 1 sku optional string
field 2 quantity optional int32
message google.protobuf.Struct
field 1 fields repeated message
message google.protobuf.Struct.FieldsEntry
field 1 key optional string
field 2 value optional message
message google.protobuf.Value
field 1 null_value optional enum
field 2 number_value optional double
field 3 string_value optional string
field 4 bool_value optional bool
field 5 struct_value optional message
field 6 list_value optional message
message google.protobuf.ListValue
field 1 values repeated message
message shop.v1.Order
field 1 id optional string
field 2 status optional enum
field 3 total optional message
field 4 placed_at optional message
field 5 first_line optional message
message google.protobuf.Timestamp
field 1 seconds optional int64
field 2 nanos optional int32
message shop.v1.GetOrderRequest
field 1 id optional string
message shop.v1.SummarizeRequest
field 1 since optional message
field 2 threshold optional message
message shop.v1.Summary
field 1 orders repeated message
field 2 total optional message
`

func TestTheDescriptorHashIsSHA256OfTheCanonicalText(t *testing.T) {
	got := hashesOf(t, map[string]string{"shop/v1/shop.proto": shopProto}, "shop/v1/shop.proto")["shop.v1"]
	if want := sha256Hex(shopCanonical); got != want {
		t.Errorf("shop.v1 hash = %s, want sha256 of the canonical text = %s", got, want)
	}
}

// legacyProto is proto2, for the spellings proto3 cannot produce: required,
// group, and the other scalar kinds.
const legacyProto = `syntax = "proto2";
package legacy.v1;
import "garm/tool/v1/tool.proto";

service Legacy {
  rpc Lookup(LookupRequest) returns (LookupResponse) {
    option (garm.tool.v1.tool) = {description: "Looks up."};
  }
}

message LookupRequest {
  required string id = 1;
  optional group Filter = 2 {
    optional uint32 limit = 1;
  }
  repeated sint64 tags = 3 [packed = true];
  optional bytes cursor = 4;
  optional fixed32 a = 5;
  optional fixed64 b = 6;
  optional sfixed32 c = 7;
  optional sfixed64 d = 8;
  optional sint32 e = 9;
  optional uint64 f = 10;
  optional float g = 11;
}

message LookupResponse {
  optional LookupRequest.Filter applied = 1;
  repeated bool flags = 2;
}
`

const legacyCanonical = `message legacy.v1.LookupRequest
field 1 id required string
field 2 filter optional group
field 3 tags repeated sint64
field 4 cursor optional bytes
field 5 a optional fixed32
field 6 b optional fixed64
field 7 c optional sfixed32
field 8 d optional sfixed64
field 9 e optional sint32
field 10 f optional uint64
field 11 g optional float
message legacy.v1.LookupRequest.Filter
field 1 limit optional uint32
message legacy.v1.LookupResponse
field 1 applied optional message
field 2 flags repeated bool
`

func TestTheHashSpellsEveryCardinalityAndKindAsProtoreflectDoes(t *testing.T) {
	got := hashesOf(t, map[string]string{"legacy/v1/legacy.proto": legacyProto}, "legacy/v1/legacy.proto")["legacy.v1"]
	if want := sha256Hex(legacyCanonical); got != want {
		t.Errorf("legacy.v1 hash = %s, want sha256 of the canonical text = %s", got, want)
	}
}

// Two packages share a message from a third; package a.v1 spans two files.
var multiSources = map[string]string{
	"common/v1/common.proto": `syntax = "proto3";
package common.v1;
message Shared { string id = 1; }
`,
	"a/v1/first.proto": `syntax = "proto3";
package a.v1;
import "garm/tool/v1/tool.proto";
import "common/v1/common.proto";
message FirstRequest { common.v1.Shared ref = 1; }
service First {
  rpc One(FirstRequest) returns (common.v1.Shared) { option (garm.tool.v1.tool) = {description: "d"}; }
}
`,
	"a/v1/second.proto": `syntax = "proto3";
package a.v1;
import "garm/tool/v1/tool.proto";
import "common/v1/common.proto";
message SecondRequest { int32 n = 1; }
service Second {
  rpc Two(SecondRequest) returns (common.v1.Shared) { option (garm.tool.v1.tool) = {description: "d"}; }
}
`,
	"b/v1/b.proto": `syntax = "proto3";
package b.v1;
import "garm/tool/v1/tool.proto";
import "common/v1/common.proto";
service B {
  rpc Three(common.v1.Shared) returns (common.v1.Shared) { option (garm.tool.v1.tool) = {description: "d"}; }
  rpc Quiet(common.v1.Shared) returns (common.v1.Shared);
}
`,
	"c/v1/c.proto": `syntax = "proto3";
package c.v1;
import "garm/tool/v1/tool.proto";
import "common/v1/common.proto";
service C {
  rpc Gone(common.v1.Shared) returns (common.v1.Shared) { option (garm.tool.v1.tool) = {exclude: true}; }
  rpc Quiet(common.v1.Shared) returns (common.v1.Shared);
}
`,
}

func TestEachPackageIsHashedOnItsOwnWithItsFilesInPathOrder(t *testing.T) {
	// a/v1/first.proto sorts before a/v1/second.proto, whatever order the
	// files are given in.
	firstThenSecond := `message a.v1.FirstRequest
field 1 ref optional message
message common.v1.Shared
field 1 id optional string
message a.v1.SecondRequest
field 1 n optional int32
`
	// b.v1 reaches common.v1.Shared too: a message is remembered per
	// package, so it is written again here.
	b := `message common.v1.Shared
field 1 id optional string
`
	// A package without tools hashes the empty text.
	c := ""

	got := hashesOf(t, multiSources, "a/v1/first.proto", "b/v1/b.proto", "c/v1/c.proto", "a/v1/second.proto")
	for pkg, text := range map[string]string{"a.v1": firstThenSecond, "b.v1": b, "c.v1": c} {
		if want := sha256Hex(text); got[pkg] != want {
			t.Errorf("%s hash = %s, want sha256 of %q = %s", pkg, got[pkg], text, want)
		}
	}

	reversed := hashesOf(t, multiSources, "a/v1/second.proto", "a/v1/first.proto")
	if want := sha256Hex(firstThenSecond); reversed["a.v1"] != want {
		t.Errorf("a.v1 hash with its files given reversed = %s, want sha256 of %q = %s (path order)", reversed["a.v1"], firstThenSecond, want)
	}
}

func TestTheHashIs64LowercaseHexCharacters(t *testing.T) {
	shape := regexp.MustCompile(`^[0-9a-f]{64}$`)
	m := build(t, multiSources, "a/v1/first.proto", "b/v1/b.proto", "c/v1/c.proto")
	m2 := build(t, map[string]string{"shop/v1/shop.proto": shopProto}, "shop/v1/shop.proto")
	for _, pkg := range append(m.Packages, m2.Packages...) {
		if !shape.MatchString(pkg.DescriptorHash) {
			t.Errorf("%s hash %q is not 64 lowercase hex characters", pkg.Name, pkg.DescriptorHash)
		}
		if got := compile.DescriptorHash(pkg.Tools); got != pkg.DescriptorHash {
			t.Errorf("%s: DescriptorHash(tools) = %s, Build recorded %s", pkg.Name, got, pkg.DescriptorHash)
		}
	}
}

// edit returns src with old replaced by new, failing the test unless old
// occurs exactly once, so no variant silently leaves the fixture unchanged.
func edit(t *testing.T, src, old, new string) string {
	t.Helper()
	if n := strings.Count(src, old); n != 1 {
		t.Fatalf("fixture edit: %q occurs %d times, want once", old, n)
	}
	return strings.Replace(src, old, new, 1)
}

func TestAPolicyChangeNeverMovesTheHash(t *testing.T) {
	base := hashesOf(t, map[string]string{"shop/v1/shop.proto": shopProto}, "shop/v1/shop.proto")["shop.v1"]
	for _, tc := range []struct {
		name     string
		old, new string
	}{
		{"a tool's description", `{description: "Places an order."}`, `{description: "Places an order, now with more words."}`},
		{"a tool's whole policy", `{description: "Reads an order."}`,
			`{name: "read_order" title: "Read" description: "Reads." verb: VERB_READ min_clearance: CLEARANCE_CONFIDENTIAL compartments: "orders" audit: {level: LEVEL_AUDIT retain_days: 30}}`},
		{"a field policy", "  string customer = 1;\n",
			"  string customer = 1 [(garm.tool.v1.field_policy) = {read: CLEARANCE_RESTRICTED compartments: \"pii\" on_deny: {mask: {with: \"*\"}}}];\n"},
		{"a message's default field policy", "message Money {\n",
			"message Money {\n  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC write: CLEARANCE_INTERNAL};\n"},
		{"a file's declarations", `import "garm/tool/v1/tool.proto";`,
			"import \"garm/tool/v1/tool.proto\";\noption (garm.tool.v1.compartments) = {declared: {name: \"orders\" description: \"Order data.\"}};"},
		{"comments", "message Order {\n", "// Order is an order.\n// It has lines.\nmessage Order {\n  // The first line.\n"},
		{"standard options", "  int64 units = 2;\n", "  int64 units = 2 [deprecated = true];\n"},
		{"a go_package", `package shop.v1;`, "package shop.v1;\noption go_package = \"example.com/shop/v1;shopv1\";"},
		{"a method option", "rpc Summarize(SummarizeRequest) returns (Summary) {\n", "rpc Summarize(SummarizeRequest) returns (Summary) {\n    option deprecated = true;\n"},
		{"an excluded method's messages", "message PurgeRequest { string everything = 1; }", "message PurgeRequest { repeated bytes everything = 7; int32 more = 8; }"},
		{"an undeclared method's messages", "message PeekResponse { bytes contents = 1; }", "message PeekResponse { string contents = 2; }"},
		{"a message no tool reaches", "message PeekRequest {", "message Unused { int32 x = 1; }\nmessage PeekRequest {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := edit(t, shopProto, tc.old, tc.new)
			if got := hashesOf(t, map[string]string{"shop/v1/shop.proto": src}, "shop/v1/shop.proto")["shop.v1"]; got != base {
				t.Errorf("changing %s moved the hash from %s to %s", tc.name, base, got)
			}
		})
	}
}

func TestAWireChangeAlwaysMovesTheHash(t *testing.T) {
	base := hashesOf(t, map[string]string{"shop/v1/shop.proto": shopProto}, "shop/v1/shop.proto")["shop.v1"]
	for _, tc := range []struct {
		name  string
		edits [][2]string // old, new
	}{
		{"rename a field", [][2]string{{"  string customer = 1;\n", "  string buyer = 1;\n"}}},
		{"renumber a field", [][2]string{{"  string customer = 1;\n", "  string customer = 6;\n"}}},
		{"change a field's type", [][2]string{{"  string customer = 1;\n", "  bytes customer = 1;\n"}}},
		{"widen an integer", [][2]string{{"message GetOrderRequest {\n  string id = 1;", "message GetOrderRequest {\n  int64 id = 1;"}}},
		{"make a field repeated", [][2]string{{"  Money threshold = 2;\n", "  repeated Money threshold = 2;\n"}}},
		{"add a field", [][2]string{{"  Money threshold = 2;\n", "  Money threshold = 2;\n  bool strict = 3;\n"}}},
		{"remove a field", [][2]string{{"  Money threshold = 2;\n", ""}}},
		{"change a nested message", [][2]string{{"    string sku = 1;\n", "    string sku = 1;\n    string note = 3;\n"}}},
		{"change a message reached only through a map", [][2]string{{"  string currency = 1;\n", "  string currency_code = 1;\n"}}},
		{"change a map's value type", [][2]string{{"map<string, Money> prices = 2;", "map<string, string> prices = 2;"}}},
		{"change a map's key type", [][2]string{{"map<string, Money> prices = 2;", "map<int64, Money> prices = 2;"}}},
		{"change a message deep in the output", [][2]string{{"  repeated Order orders = 1;\n", "  repeated Order orders = 1;\n  int32 count = 3;\n"}}},
		{"swap a well-known type", [][2]string{{"google.protobuf.Timestamp placed_at = 4;", "google.protobuf.Struct placed_at = 4;"}}},
		{"point a field at another message", [][2]string{{"  Money total = 3;\n", "  Summary total = 3;\n"}}},
		{"rename a message", [][2]string{
			{"rpc GetOrder(GetOrderRequest)", "rpc GetOrder(GetOrderRequest2)"},
			{"message GetOrderRequest {", "message GetOrderRequest2 {"},
		}},
		{"change an enum field to an integer", [][2]string{{"  Status status = 2;\n", "  int32 status = 2;\n"}}},
		{"add a tool", [][2]string{{"rpc Peek(PeekRequest) returns (PeekResponse);",
			"rpc Peek(PeekRequest) returns (PeekResponse) { option (garm.tool.v1.tool) = {description: \"Peeks.\"}; }"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := shopProto
			for _, e := range tc.edits {
				src = edit(t, src, e[0], e[1])
			}
			if got := hashesOf(t, map[string]string{"shop/v1/shop.proto": src}, "shop/v1/shop.proto")["shop.v1"]; got == base {
				t.Errorf("%s left the hash at %s", tc.name, base)
			}
		})
	}
}
