package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/garm-dev/garm/protoc-gen-garm/generate"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// docTest is a fenced block a doc marks with <!-- doc-test: KIND ARGS -->
// on the line before it.
type docTest struct {
	line       int
	kind, args string
	body       string
}

var docTestMarker = regexp.MustCompile("(?m)^<!-- doc-test: (\\w+) ?([^>]*?) -->\n```(\\w+)\n")

// docTests are the marked blocks of a markdown file.
func docTests(t *testing.T, path string) []docTest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	var out []docTest
	for _, m := range docTestMarker.FindAllStringSubmatchIndex(text, -1) {
		rest := text[m[1]:]
		end := strings.Index(rest, "\n```\n")
		if end < 0 {
			t.Fatalf("%s: a doc-test block is not closed", path)
		}
		out = append(out, docTest{
			line: strings.Count(text[:m[0]], "\n") + 1,
			kind: text[m[2]:m[3]], args: text[m[4]:m[5]],
			body: rest[:end+1],
		})
	}
	return out
}

// TestTheToolAuthorsDocsExamplesLintAndAreWhatGarmNewWrites holds
// docs/tool-authors.md to the lint and the scaffold: every proto block
// compiles and lints without an error, one marked `proto scaffold FILE` is
// the whole FILE garm new writes for hr, and every Go block marked
// `go scaffold FILE` is verbatim in that FILE (which TestTheAuthorsPath…
// builds and runs).
func TestTheToolAuthorsDocsExamplesLintAndAreWhatGarmNewWrites(t *testing.T) {
	doc := repoFile("docs", "tool-authors.md")
	blocks := docTests(t, doc)
	dir := filepath.Join(t.TempDir(), "hr")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir}, &out, &out); code != exitOK {
		t.Fatalf("garm new: exit %d:\n%s", code, out.String())
	}
	var linted, compared int
	for _, b := range blocks {
		switch b.kind {
		case "proto":
			if file, ok := strings.CutPrefix(b.args, "scaffold "); ok {
				written, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatalf("%s:%d: %v", doc, b.line, err)
				}
				if string(written) != b.body {
					t.Errorf("%s:%d: the proto block is not the %s garm new writes:\n%s", doc, b.line, file, written)
				}
				compared++
			} else if b.args != "lint" {
				t.Fatalf("%s:%d: unknown proto doc-test %q", doc, b.line, b.args)
			}
			lintDocProto(t, doc, b)
			linted++
		case "go":
			file, ok := strings.CutPrefix(b.args, "scaffold ")
			if !ok {
				t.Fatalf("%s:%d: unknown go doc-test %q", doc, b.line, b.args)
			}
			written, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatalf("%s:%d: %v", doc, b.line, err)
			}
			if !strings.Contains(string(written), b.body) {
				t.Errorf("%s:%d: the Go block is not in the %s garm new writes:\n%s", doc, b.line, file, written)
			}
			compared++
		default:
			t.Fatalf("%s:%d: unknown doc-test kind %q", doc, b.line, b.kind)
		}
	}
	if linted < 2 || compared < 2 {
		t.Errorf("%s: %d proto blocks linted and %d Go blocks compared; the doc's examples are not all marked", doc, linted, compared)
	}
}

// lintDocProto compiles a doc's proto block against garm's vocabulary and
// protovalidate, and generates from it as buf generate would, which lints it
// first: a lint error fails, and so does a block that declares no tool.
func lintDocProto(t *testing.T, doc string, b docTest) {
	t.Helper()
	const name = "doc.proto"
	compiler := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.CompositeResolver{
			&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(map[string]string{name: b.body})},
			&protocompile.SourceResolver{ImportPaths: []string{repoFile("annotations"), repoFile("third_party", "protovalidate")}},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	compiled, err := compiler.Compile(t.Context(), name)
	if err != nil {
		t.Errorf("%s:%d: the proto block does not compile: %v", doc, b.line, err)
		return
	}
	var diagnostics strings.Builder
	files, err := generate.GoAndGarm([]protoreflect.FileDescriptor{compiled[0]}, "paths=source_relative", &diagnostics)
	if err != nil {
		t.Errorf("%s:%d: the proto block fails: %v\n%s", doc, b.line, err, diagnostics.String())
		return
	}
	if !slices.ContainsFunc(files, func(f generate.File) bool { return strings.HasSuffix(f.Name, "_garm.pb.go") }) {
		t.Errorf("%s:%d: the proto block declares no tool, so the lint checks nothing of it", doc, b.line)
	}
}
