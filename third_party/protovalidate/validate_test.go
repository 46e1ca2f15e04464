// Package protovalidate_test proves the workspace's copy of
// buf/validate/validate.proto, which buf resolves without any registry, is the
// file linked into buf.build/go/protovalidate: compiled here, it gives exactly
// the descriptor the validator garmd runs was generated from.
package protovalidate_test

import (
	"context"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	// Linked so go.mod pins the validator garmd runs, and through it the
	// version of the generated descriptor compared here.
	_ "buf.build/go/protovalidate"
	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func TestTheWorkspaceCopyCompilesToTheLinkedDescriptor(t *testing.T) {
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"."}}),
	}
	files, err := compiler.Compile(context.Background(), "buf/validate/validate.proto")
	if err != nil {
		t.Fatalf("compiling the workspace copy: %v", err)
	}
	got := normalized(t, protodesc.ToFileDescriptorProto(files[0]))
	want := normalized(t, protodesc.ToFileDescriptorProto(validate.File_buf_validate_validate_proto))
	if !proto.Equal(got, want) {
		t.Fatalf("third_party/protovalidate/buf/validate/validate.proto has drifted from the linked descriptor;\n"+
			"copy proto/protovalidate/buf/validate/validate.proto from the github.com/bufbuild/protovalidate release that matches\n"+
			"buf.build/go/protovalidate's go.mod.\ncompiled:\n%.2000s\nlinked:\n%.2000s",
			prototext.Format(got), prototext.Format(want))
	}
}

// normalized strips source info and re-reads the descriptor against the
// linked extension types, so options compare by value whether a compiler left
// an extension parsed or as raw bytes.
func normalized(t *testing.T, fdp *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	t.Helper()
	fdp.SourceCodeInfo = nil
	raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil {
		t.Fatal(err)
	}
	out := new(descriptorpb.FileDescriptorProto)
	if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}
