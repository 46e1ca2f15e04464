package sources_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/internal/buildtest"
	"github.com/garm-dev/garm/catalogue-builder/internal/sources"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

const usesVocabulary = `syntax = "proto3";
package a.v1;
import "garm/tool/v1/tool.proto";
import "buf/validate/validate.proto";
import "google/protobuf/timestamp.proto";
message M {
  google.protobuf.Timestamp at = 1 [(buf.validate.field).required = true];
}
`

func TestTheVocabularyResolvesFromTheBinary(t *testing.T) {
	set, err := sources.Compile(context.Background(), []string{buildtest.Tree(t, map[string]string{"a/v1/a.proto": usesVocabulary})})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Files) != 1 || set.Files[0].Path() != "a/v1/a.proto" {
		t.Fatalf("files %v", set.Files)
	}
	imports := set.Files[0].Imports()
	if imports.Len() != 3 {
		t.Fatalf("%d imports", imports.Len())
	}
	for i := 0; i < imports.Len(); i++ {
		got := imports.Get(i).FileDescriptor
		linked, ok := sources.Linked(got.Path())
		if !ok || got != linked {
			t.Errorf("%s did not resolve to the linked descriptor", got.Path())
		}
	}
}

func TestCompileReportsProblemsWithTheirPositions(t *testing.T) {
	cases := map[string]struct {
		files map[string]string
		want  []string
	}{
		"a syntax error": {
			files: map[string]string{
				"a/v1/broken.proto": "syntax = \"proto3\";\npackage a.v1;\nmessage M {\n  string s = 1\n  string t = 2\n}\n",
			},
			want: []string{filepath.FromSlash("a/v1/broken.proto") + ":5:3: syntax error: expecting ';'"},
		},
		"an unresolvable import": {
			files: map[string]string{
				"b/v1/missing.proto": "syntax = \"proto3\";\npackage b.v1;\nimport \"nowhere/v1/x.proto\";\n",
			},
			want: []string{filepath.FromSlash("b/v1/missing.proto") + ":3:8: ", `"nowhere/v1/x.proto"`},
		},
		"two errors in one file": {
			files: map[string]string{
				"c/v1/two.proto": "syntax = \"proto3\";\npackage c.v1;\nmessage M {\n  Unknown u = 1;\n  Other o = 2;\n}\n",
			},
			want: []string{":4:3: ", ":5:3: "},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := buildtest.Tree(t, tc.files)
			t.Chdir(dir)
			_, err := sources.Compile(context.Background(), []string{dir})
			problems, ok := err.(sources.Problems)
			if !ok {
				t.Fatalf("got %T %v", err, err)
			}
			for _, want := range tc.want {
				if !strings.Contains(problems.Error(), want) {
					t.Errorf("problems do not contain %q:\n%s", want, problems.Error())
				}
			}
		})
	}
}

func TestASourceShadowingTheVocabularyIsRefused(t *testing.T) {
	dir := buildtest.Tree(t, map[string]string{
		"garm/tool/v1/tool.proto": "syntax = \"proto3\";\npackage garm.tool.v1;\n",
		"a/v1/a.proto":            usesVocabulary,
	})
	_, err := sources.Compile(context.Background(), []string{dir})
	if err == nil || !strings.Contains(err.Error(), "garm/tool/v1/tool.proto is garm-catalogue's own vocabulary") {
		t.Fatalf("got %v", err)
	}
}

func TestOneImportPathInTwoRootsIsRefused(t *testing.T) {
	a := buildtest.Tree(t, map[string]string{"a/v1/a.proto": usesVocabulary})
	b := buildtest.Tree(t, map[string]string{"a/v1/a.proto": usesVocabulary})
	_, err := sources.Compile(context.Background(), []string{a, b})
	if err == nil || !strings.Contains(err.Error(), "an import path must name one file") {
		t.Fatalf("got %v", err)
	}
}

func TestARootWithoutProtoFilesIsRefused(t *testing.T) {
	_, err := sources.Compile(context.Background(), []string{t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "holds no .proto file") {
		t.Fatalf("got %v", err)
	}
}

// image compiles usesVocabulary and writes it as a FileDescriptorSet,
// optionally with its imports and with buf's per-file extension.
func image(t *testing.T, withImports, asBuf bool) []byte {
	t.Helper()
	set, err := sources.Compile(context.Background(), []string{buildtest.Tree(t, map[string]string{"a/v1/a.proto": usesVocabulary})})
	if err != nil {
		t.Fatal(err)
	}
	fds := &descriptorpb.FileDescriptorSet{}
	if withImports {
		imports := set.Files[0].Imports()
		for i := 0; i < imports.Len(); i++ {
			fds.File = append(fds.File, protodesc.ToFileDescriptorProto(imports.Get(i).FileDescriptor))
		}
	}
	fds.File = append(fds.File, protodesc.ToFileDescriptorProto(set.Files[0]))
	if asBuf {
		for _, f := range fds.File {
			// buf.alpha.image.v1.ImageFileExtension{is_import: ...}
			ext := protowire.AppendTag(nil, 1, protowire.VarintType)
			ext = protowire.AppendVarint(ext, 0)
			raw := protowire.AppendTag(nil, 8042, protowire.BytesType)
			f.ProtoReflect().SetUnknown(protowire.AppendBytes(raw, ext))
		}
	}
	data, err := proto.Marshal(fds)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestAnImageIsReadAgainstTheLinkedVocabulary(t *testing.T) {
	for _, asBuf := range []bool{false, true} {
		set, err := sources.FromImage(image(t, true, asBuf))
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "FileDescriptorSet", true: "buf image"}[asBuf]
		if set.Compiler != want {
			t.Errorf("compiler %q, want %q", set.Compiler, want)
		}
		if len(set.Files) != 1 || set.Files[0].Path() != "a/v1/a.proto" {
			t.Fatalf("files %v", set.Files)
		}
		if got := set.Files[0].Imports().Get(0).FileDescriptor; got != mustLinked(t, got.Path()) {
			t.Errorf("%s is the image's copy, not the linked one", got.Path())
		}
	}
}

func TestAnImageWithoutItsImportsIsRefused(t *testing.T) {
	// The vocabulary is always linked, so leave out a file of the author's.
	withDep := buildtest.Tree(t, map[string]string{
		"a/v1/a.proto": "syntax = \"proto3\";\npackage a.v1;\nimport \"b/v1/b.proto\";\nmessage M { b.v1.N n = 1; }\n",
		"b/v1/b.proto": "syntax = \"proto3\";\npackage b.v1;\nmessage N {}\n",
	})
	set, err := sources.Compile(context.Background(), []string{withDep})
	if err != nil {
		t.Fatal(err)
	}
	data, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(set.Files[0])}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sources.FromImage(data)
	if err == nil || !strings.Contains(err.Error(), "a/v1/a.proto imports b/v1/b.proto, which the image does not hold") {
		t.Fatalf("got %v", err)
	}
}

func TestGarbageIsNotAnImage(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("\xff\xff\xff garbage")} {
		if _, err := sources.FromImage(data); err == nil {
			t.Fatalf("%q read as an image", data)
		}
	}
}

func mustLinked(t *testing.T, path string) any {
	t.Helper()
	fd, ok := sources.Linked(path)
	if !ok {
		t.Fatalf("%s is not linked", path)
	}
	return fd
}
