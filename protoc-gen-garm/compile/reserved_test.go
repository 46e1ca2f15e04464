package compile_test

import (
	"strings"
	"testing"

	toolv1 "github.com/garm-dev/garm/gen/garm/tool/v1"
	"github.com/garm-dev/garm/protoc-gen-garm/compile"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// customTransform is an on_deny that sets Redaction field 15, reserved for
// custom transforms (design 3.1, 11): FieldPolicy.on_deny (4) holding a
// Redaction whose field 15 is an empty message. No .proto source can say
// it — the field is reserved — so it is written as bytes, as a newer or
// hand-made descriptor would carry it.
func customTransform() []byte {
	custom := protowire.AppendTag(nil, 15, protowire.BytesType)
	custom = protowire.AppendBytes(custom, nil)
	onDeny := protowire.AppendTag(nil, 4, protowire.BytesType)
	return protowire.AppendBytes(onDeny, custom)
}

// withPolicyBytes compiles a one-tool fixture whose request field `question`
// has a field_policy and whose request message has a default_field_policy,
// and appends raw to one of the two: the field's when onField, else the
// message's. Two occurrences of one message field merge when parsed, so raw
// lands inside the FieldPolicy.
func withPolicyBytes(t *testing.T, raw []byte, onField bool) protoreflect.FileDescriptor {
	t.Helper()
	const src = `syntax = "proto3";
package reserved.v1;
import "garm/tool/v1/tool.proto";
message Req {
  option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC on_deny: {omit: {}}};
  optional string question = 1 [(garm.tool.v1.field_policy) = {read: CLEARANCE_INTERNAL on_deny: {omit: {}}}];
  optional string topic = 2;
}
message Res { option (garm.tool.v1.default_field_policy) = {read: CLEARANCE_PUBLIC}; optional string answer = 1; }
service Svc {
  rpc Ask(Req) returns (Res) {
    option (garm.tool.v1.tool) = {description: "Asks." verb: VERB_READ min_clearance: CLEARANCE_PUBLIC};
  }
}
`
	compiled := fixture.Compile(t, map[string]string{"reserved/v1/reserved.proto": src}, nil, "reserved/v1/reserved.proto")[0]
	fdp := protodesc.ToFileDescriptorProto(compiled)
	req := fdp.GetMessageType()[0]
	var opts protoreflect.Message
	var number protoreflect.FieldNumber
	if onField {
		opts, number = req.GetField()[0].GetOptions().ProtoReflect(), toolv1.E_FieldPolicy.TypeDescriptor().Number()
	} else {
		opts, number = req.GetOptions().ProtoReflect(), toolv1.E_DefaultFieldPolicy.TypeDescriptor().Number()
	}
	wrapped := protowire.AppendTag(nil, number, protowire.BytesType)
	wrapped = protowire.AppendBytes(wrapped, raw)
	opts.SetUnknown(append(opts.GetUnknown(), wrapped...))

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
		t.Fatalf("protodesc.NewFile: %v", err)
	}
	return f
}

func TestARedactionSettingTheReservedCustomTransformIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		onField bool
		// field is the request field whose policy carries the transform.
		field, where string
	}{
		{"in a field's own policy", true, "question", "garm.tool.v1.field_policy.on_deny: field 15"},
		{"in a message's default policy", false, "topic", "garm.tool.v1.default_field_policy.on_deny: field 15"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Without the bytes the fixture is clean: the refusal below is
			// field 15's doing.
			clean := withPolicyBytes(t, nil, tc.onField)
			m, err := compile.Build([]protoreflect.FileDescriptor{clean})
			if err != nil {
				t.Fatal(err)
			}
			if ds := compile.Lint(m, compile.CatalogueScope); ds.HasErrors() {
				t.Fatalf("the untouched fixture does not lint clean: %v", ds)
			}

			f := withPolicyBytes(t, customTransform(), tc.onField)
			fd := f.Messages().ByName("Req").Fields().ByName(protoreflect.Name(tc.field))
			if _, _, err := compile.FieldPolicyOf(fd); err == nil || !strings.Contains(err.Error(), tc.where) {
				t.Fatalf("FieldPolicyOf(%s) = %v, want a refusal naming %q", tc.field, err, tc.where)
			}
			m, err = compile.Build([]protoreflect.FileDescriptor{f})
			if err != nil {
				t.Fatal(err)
			}
			ds := compile.Lint(m, compile.CatalogueScope)
			found := false
			for _, d := range ds {
				found = found || (d.Severity == compile.Error && d.Rule == "L1" && strings.Contains(d.Message, tc.where))
			}
			if !found {
				t.Fatalf("lint did not refuse the custom transform naming %q: %v", tc.where, ds)
			}
			if _, err := compile.PlanMessage(f.Messages().ByName("Req")); err == nil || !strings.Contains(err.Error(), "field 15") {
				t.Fatalf("PlanMessage = %v, want a refusal naming field 15", err)
			}
		})
	}
}
