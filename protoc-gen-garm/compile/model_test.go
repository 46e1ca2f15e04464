package compile_test

import (
	"slices"
	"strings"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// build compiles in-memory sources and builds the model of the named files,
// in the order given.
func build(t *testing.T, sources map[string]string, files ...string) *compile.Model {
	t.Helper()
	m, err := compile.Build(fixture.Compile(t, sources, nil, files...))
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return m
}

// methodNames lists the short names of methods.
func methodNames(mds []protoreflect.MethodDescriptor) []string {
	names := []string{}
	for _, md := range mds {
		names = append(names, string(md.Name()))
	}
	return names
}

func toolFQNs(tools []*compile.Tool) []string {
	fqns := []string{}
	for _, t := range tools {
		fqns = append(fqns, t.FQN)
	}
	return fqns
}

const paymentsProto = `syntax = "proto3";
package pay.v1;
import "garm/tool/v1/tool.proto";

message Req {}
message Res {}

service Payments {
  rpc InitiatePayment(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Starts a payment." verb: VERB_DESTRUCTIVE};
  }
  rpc Refund(Req) returns (Res) {
    option (garm.tool.v1.tool) = {name: "refund_payment" description: "Refunds a payment."};
  }
  rpc Purge(Req) returns (Res) {
    option (garm.tool.v1.tool) = {exclude: true description: "Not a tool."};
  }
  rpc Ping(Req) returns (Res);
  rpc GetHTTPStatus(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Reports status."};
  }
}

service Internal {
  rpc Rebuild(Req) returns (Res);
}
`

func TestBuildNamesEveryToolAndItsRoutes(t *testing.T) {
	m := build(t, map[string]string{"pay/v1/pay.proto": paymentsProto}, "pay/v1/pay.proto")
	if len(m.Packages) != 1 {
		t.Fatalf("got %d packages, want 1", len(m.Packages))
	}
	pkg := m.Packages[0]
	if pkg.Name != "pay.v1" {
		t.Errorf("package name = %q, want pay.v1", pkg.Name)
	}
	type route struct{ name, fqn, method, subject, queue, service, path, description string }
	want := []route{
		{"initiate_payment", "pay.v1.initiate_payment", "/pay.v1.Payments/InitiatePayment", "pay.v1.Payments.InitiatePayment", "pay.v1.Payments", "pay.v1.Payments", "pay.v1.Payments.InitiatePayment", "Starts a payment."},
		{"refund_payment", "pay.v1.refund_payment", "/pay.v1.Payments/Refund", "pay.v1.Payments.Refund", "pay.v1.Payments", "pay.v1.Payments", "pay.v1.Payments.Refund", "Refunds a payment."},
		{"get_http_status", "pay.v1.get_http_status", "/pay.v1.Payments/GetHTTPStatus", "pay.v1.Payments.GetHTTPStatus", "pay.v1.Payments", "pay.v1.Payments", "pay.v1.Payments.GetHTTPStatus", "Reports status."},
	}
	if len(pkg.Tools) != len(want) {
		t.Fatalf("got tools %v, want %d", toolFQNs(pkg.Tools), len(want))
	}
	for i, w := range want {
		tool := pkg.Tools[i]
		got := route{tool.Name, tool.FQN, tool.Method, tool.Subject, tool.QueueGroup, string(tool.Service.Desc.FullName()), tool.Path(), tool.Policy.GetDescription()}
		if got != w {
			t.Errorf("tool %d:\n got %+v\nwant %+v", i, got, w)
		}
	}
	if got := pkg.Tools[0].Policy.GetVerb(); got != toolv1.Verb_VERB_DESTRUCTIVE {
		t.Errorf("initiate_payment verb = %v, want the declared VERB_DESTRUCTIVE", got)
	}
}

func TestExcludedAndUndeclaredMethodsAreRecordedAndAreNotTools(t *testing.T) {
	m := build(t, map[string]string{"pay/v1/pay.proto": paymentsProto}, "pay/v1/pay.proto")
	pkg := m.Packages[0]
	if len(pkg.Services) != 2 {
		t.Fatalf("got %d services, want 2 (a service without tools is still a service)", len(pkg.Services))
	}
	payments, internal := pkg.Services[0], pkg.Services[1]
	if payments.Desc.FullName() != "pay.v1.Payments" || internal.Desc.FullName() != "pay.v1.Internal" {
		t.Fatalf("services = %s, %s; want pay.v1.Payments, pay.v1.Internal in declaration order", payments.Desc.FullName(), internal.Desc.FullName())
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"Payments tools", toolFQNs(payments.Tools), []string{"pay.v1.initiate_payment", "pay.v1.refund_payment", "pay.v1.get_http_status"}},
		{"Payments excluded", methodNames(payments.Excluded), []string{"Purge"}},
		{"Payments undeclared", methodNames(payments.Undeclared), []string{"Ping"}},
		{"Internal tools", toolFQNs(internal.Tools), []string{}},
		{"Internal excluded", methodNames(internal.Excluded), []string{}},
		{"Internal undeclared", methodNames(internal.Undeclared), []string{"Rebuild"}},
		{"package tools", toolFQNs(pkg.Tools), []string{"pay.v1.initiate_payment", "pay.v1.refund_payment", "pay.v1.get_http_status"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if !payments.HasTools() || internal.HasTools() {
		t.Errorf("HasTools: Payments %v, Internal %v; want true, false", payments.HasTools(), internal.HasTools())
	}
}

func TestPackagesComeInTheOrderOfTheirFirstFileAndToolsInDeclarationOrder(t *testing.T) {
	file := func(pkg, svc string, methods ...string) string {
		var b strings.Builder
		b.WriteString("syntax = \"proto3\";\npackage " + pkg + ";\nimport \"garm/tool/v1/tool.proto\";\n")
		b.WriteString("message " + svc + "Msg {}\nservice " + svc + " {\n")
		for _, m := range methods {
			b.WriteString("  rpc " + m + "(" + svc + "Msg) returns (" + svc + "Msg) { option (garm.tool.v1.tool) = {description: \"d\"}; }\n")
		}
		b.WriteString("}\n")
		return b.String()
	}
	sources := map[string]string{
		"zeta/v1/first.proto":  file("zeta.v1", "Front", "Open", "Close"),
		"alpha/v1/only.proto":  file("alpha.v1", "Solo", "Run"),
		"zeta/v1/second.proto": file("zeta.v1", "Back", "Archive"),
		"zeta/v1/third.proto":  file("zeta.v1", "Aft", "Beach"),
	}
	m := build(t, sources, "zeta/v1/first.proto", "alpha/v1/only.proto", "zeta/v1/third.proto", "zeta/v1/second.proto")

	var pkgs []string
	for _, p := range m.Packages {
		pkgs = append(pkgs, string(p.Name))
	}
	if want := []string{"zeta.v1", "alpha.v1"}; !slices.Equal(pkgs, want) {
		t.Fatalf("packages = %q, want %q", pkgs, want)
	}
	zeta := m.Packages[0]
	var files []string
	for _, f := range zeta.Files {
		files = append(files, f.Path())
	}
	if want := []string{"zeta/v1/first.proto", "zeta/v1/second.proto", "zeta/v1/third.proto"}; !slices.Equal(files, want) {
		t.Errorf("zeta.v1 files = %q, want %q (path order, whatever the order given)", files, want)
	}
	if got, want := toolFQNs(zeta.Tools), []string{"zeta.v1.open", "zeta.v1.close", "zeta.v1.archive", "zeta.v1.beach"}; !slices.Equal(got, want) {
		t.Errorf("zeta.v1 tools = %q, want %q (files in path order, then methods in declaration order)", got, want)
	}
	var services []string
	for _, s := range zeta.Services {
		services = append(services, string(s.Desc.FullName()))
	}
	if want := []string{"zeta.v1.Front", "zeta.v1.Back", "zeta.v1.Aft"}; !slices.Equal(services, want) {
		t.Errorf("zeta.v1 services = %q, want %q", services, want)
	}
	if got, want := toolFQNs(m.Packages[1].Tools), []string{"alpha.v1.run"}; !slices.Equal(got, want) {
		t.Errorf("alpha.v1 tools = %q, want %q", got, want)
	}
}

// withUnknownToolField compiles a one-tool fixture and returns it as a file
// descriptor again after appending raw to the method's (garm.tool.v1.tool)
// value. Two occurrences of one message field merge when parsed, so raw
// lands inside the ToolPolicy, not beside it.
func withUnknownToolField(t *testing.T, raw []byte) protoreflect.FileDescriptor {
	t.Helper()
	const src = `syntax = "proto3";
package ext.v1;
import "garm/tool/v1/tool.proto";
message Req {}
message Res {}
service Svc {
  rpc Plain(Req) returns (Res) { option (garm.tool.v1.tool) = {description: "Has no unknown field."}; }
  rpc Charge(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Charges." effects: {idempotent: true}};
  }
}
`
	compiled := fixture.Compile(t, map[string]string{"ext/v1/ext.proto": src}, nil, "ext/v1/ext.proto")[0]
	fdp := protodesc.ToFileDescriptorProto(compiled)
	method := fdp.GetService()[0].GetMethod()[1]
	if method.GetName() != "Charge" {
		t.Fatalf("fixture: method 1 is %s, want Charge", method.GetName())
	}
	if len(raw) > 0 {
		wrapped := protowire.AppendTag(nil, protowire.Number(toolv1.E_Tool.TypeDescriptor().Number()), protowire.BytesType)
		wrapped = protowire.AppendBytes(wrapped, raw)
		opts := method.GetOptions().ProtoReflect()
		opts.SetUnknown(append(opts.GetUnknown(), wrapped...))
	}

	deps := new(protoregistry.Files)
	var register func(protoreflect.FileDescriptor)
	register = func(f protoreflect.FileDescriptor) {
		if _, err := deps.FindFileByPath(f.Path()); err == nil {
			return
		}
		imports := f.Imports()
		for i := 0; i < imports.Len(); i++ {
			register(imports.Get(i).FileDescriptor)
		}
		if err := deps.RegisterFile(f); err != nil {
			t.Fatal(err)
		}
	}
	imports := compiled.Imports()
	for i := 0; i < imports.Len(); i++ {
		register(imports.Get(i).FileDescriptor)
	}
	f, err := protodesc.NewFile(fdp, deps)
	if err != nil {
		t.Fatalf("protodesc.NewFile: %v", err)
	}

	// The bytes must have survived the round trip into the descriptor the
	// test hands to Build, or a passing test would prove nothing.
	if len(raw) > 0 {
		decoded := new(descriptorpb.MethodOptions)
		wire, err := proto.Marshal(f.Services().Get(0).Methods().Get(1).Options())
		if err != nil {
			t.Fatal(err)
		}
		if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(wire, decoded); err != nil {
			t.Fatal(err)
		}
		policy := proto.GetExtension(decoded, toolv1.E_Tool).(*toolv1.ToolPolicy)
		if policy.GetDescription() != "Charges." {
			t.Fatalf("round trip lost the declaration: %v", policy)
		}
		if len(policy.ProtoReflect().GetUnknown()) == 0 && len(policy.GetEffects().ProtoReflect().GetUnknown()) == 0 {
			t.Fatalf("round trip lost the unknown field: %v", policy)
		}
	}
	return f
}

func TestAnAnnotationWithAFieldThisBuildDoesNotKnowIsRefused(t *testing.T) {
	// The same round trip without the unknown field builds: the refusal
	// below is the unknown field's doing, not the round trip's.
	m, err := compile.Build([]protoreflect.FileDescriptor{withUnknownToolField(t, nil)})
	if err != nil {
		t.Fatalf("Build of the untouched round trip: %v", err)
	}
	if got := toolFQNs(m.Packages[0].Tools); !slices.Equal(got, []string{"ext.v1.plain", "ext.v1.charge"}) {
		t.Fatalf("tools of the untouched round trip = %q", got)
	}

	reserved := protowire.AppendTag(nil, 11, protowire.VarintType) // 11 is reserved in ToolPolicy
	reserved = protowire.AppendVarint(reserved, 1)
	_, err = compile.Build([]protoreflect.FileDescriptor{withUnknownToolField(t, reserved)})
	if err == nil {
		t.Fatal("Build accepted a tool declaration that sets field 11, which this build does not know")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"ext.v1.Svc.Charge", "field 11"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ext.v1.Svc.Plain") {
		t.Errorf("error %q names the method without the unknown field", err)
	}
}

func TestAnUnknownFieldDeepInsideAnAnnotationIsRefusedToo(t *testing.T) {
	inner := protowire.AppendTag(nil, 9, protowire.VarintType) // Effects has no field 9
	inner = protowire.AppendVarint(inner, 1)
	effects := protowire.AppendTag(nil, 8, protowire.BytesType) // ToolPolicy.effects
	effects = protowire.AppendBytes(effects, inner)
	_, err := compile.Build([]protoreflect.FileDescriptor{withUnknownToolField(t, effects)})
	if err == nil {
		t.Fatal("Build accepted a tool declaration whose effects set field 9, which this build does not know")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"ext.v1.Svc.Charge", "effects", "field 9"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestAnotherVocabularysMethodOptionIsNotGarmsToRefuse(t *testing.T) {
	src := `syntax = "proto3";
package other.v1;
import "garm/tool/v1/tool.proto";
import "google/protobuf/descriptor.proto";
extend google.protobuf.MethodOptions { string route = 51234; }
message Req {}
service Svc {
  rpc Get(Req) returns (Req) {
    option (route) = "/get";
    option (garm.tool.v1.tool) = {description: "Gets."};
  }
}
`
	m := build(t, map[string]string{"other/v1/other.proto": src}, "other/v1/other.proto")
	if got := toolFQNs(m.Packages[0].Tools); !slices.Equal(got, []string{"other.v1.get"}) {
		t.Errorf("tools = %q, want [other.v1.get]", got)
	}
}
