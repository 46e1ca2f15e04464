package compile_test

import (
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const refundsProto = `syntax = "proto3";
package refund.v1;
import "garm/tool/v1/tool.proto";

message Req {}
message Res {}

service Refunds {
  rpc Issue(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Issues a refund."};
  }
}
`

func TestBuildReusingTakesOnlyAPackageOfTheVeryFilesItWasBuiltFrom(t *testing.T) {
	sources := map[string]string{"pay/v1/pay.proto": paymentsProto, "refund/v1/refund.proto": refundsProto}
	files := fixture.Compile(t, sources, nil, "pay/v1/pay.proto", "refund/v1/refund.proto")
	previous, err := compile.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	same, err := compile.BuildReusing(files, previous)
	if err != nil {
		t.Fatal(err)
	}
	for i, pkg := range same.Packages {
		if pkg != previous.Packages[i] {
			t.Errorf("package %s, of the same files, was built again", pkg.Name)
		}
	}
	// The same sources compiled again: equal descriptors, other objects.
	again := fixture.Compile(t, sources, nil, "pay/v1/pay.proto", "refund/v1/refund.proto")
	rebuilt, err := compile.BuildReusing([]protoreflect.FileDescriptor{files[0], again[1]}, previous)
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt.Packages[0] != previous.Packages[0] {
		t.Error("pay.v1, of the very same file, was built again")
	}
	if rebuilt.Packages[1] == previous.Packages[1] {
		t.Fatal("refund.v1 was taken though its file is another descriptor")
	}
	if got := toolFQNs(rebuilt.Packages[1].Tools); len(got) != 1 || got[0] != "refund.v1.issue" {
		t.Fatalf("refund.v1 tools %q", got)
	}
	if rebuilt.Packages[1].DescriptorHash != previous.Packages[1].DescriptorHash {
		t.Fatal("the same sources hash to another descriptor hash")
	}
}
