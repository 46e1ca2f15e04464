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
// and response, the size the spec's generator budget is stated for.
func thousandTools(n int) string {
	var b strings.Builder
	b.WriteString(`syntax = "proto3";
package big.v1;
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
  string id = 1;
  repeated string tags = 2;
}
message Op%dResponse {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC};
  string result = 1;
}
`, i, i)
	}
	return b.String()
}

// BenchmarkGenerateThousandToolPackage measures one plugin run over a
// 1,000-tool package, from a decoded request to the response (protogen's
// descriptor building, the model, lint and the bindings); the budget is 2 s.
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
		if resp := gen.Response(); resp.Error != nil || len(resp.File) != 1 {
			b.Fatalf("response: error %v, %d files", resp.GetError(), len(resp.File))
		}
	}
}
