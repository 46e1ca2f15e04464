package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/plugin"
	"google.golang.org/protobuf/compiler/protogen"
)

// thousandTools is one package declaring n tools, each with its own request
// and response and a shared nested message, with validation rules and field
// policies of their own, the size the spec's generator budget is stated for.
func thousandTools(n int) string {
	var b strings.Builder
	b.WriteString(`syntax = "proto3";
package big.v1;
import "buf/validate/validate.proto";
import "garm/tool/v1/tool.proto";
option go_package = "example.com/big/v1;bigv1";
service BigService {
`)
	for i := range n {
		fmt.Fprintf(&b, `  rpc Op%d(Op%dRequest) returns (Op%dResponse) {
    option (garm.tool.v1.tool) = {description: "Operation %d." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC};
  }
`, i, i, i, i)
	}
	b.WriteString("}\n")
	for i := range n {
		fmt.Fprintf(&b, `message Op%dRequest {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  // The id of the thing to operate on.
  optional string id = 1 [(buf.validate.field).string = {min_len: 1, max_len: 64}];
  // Labels.
  repeated string tags = 2 [(buf.validate.field).repeated.max_items = 10];
  // Which page of results.
  Page page = 3;
}
message Op%dResponse {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  // The result.
  optional string result = 1;
  // Who asked, shown to others as a domain.
  optional string email = 2 [(garm.tool.v1.field_policy) = {read: CLEARANCE_CONFIDENTIAL on_deny: {email_domain: {}}}];
}
`, i, i)
	}
	b.WriteString(`message Page {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  optional int32 size = 1 [(buf.validate.field).int32 = {gt: 0, lte: 100}];
  optional string token = 2;
}
`)
	return b.String()
}

// BenchmarkGenerateThousandToolPackage measures one plugin run over a
// 1,000-tool package, from a decoded request to the response (protogen's
// descriptor building, the model, lint, the bindings and the plan file with
// its schemas); the budget is 2 s.
func BenchmarkGenerateThousandToolPackage(b *testing.B) {
	files := fixture.Compile(b, map[string]string{"big.proto": thousandTools(1000)}, nil, "big.proto")
	req := fixture.Request(b, "paths=source_relative", files)
	for b.Loop() {
		params := plugin.DefaultParams()
		gen, err := protogen.Options{ParamFunc: params.Set}.New(req)
		if err != nil {
			b.Fatal(err)
		}
		if err := plugin.Run(gen, params, io.Discard); err != nil {
			b.Fatal(err)
		}
		if resp := gen.Response(); resp.Error != nil || len(resp.File) != 2 {
			b.Fatalf("response: error %v, %d files", resp.GetError(), len(resp.File))
		}
	}
}
