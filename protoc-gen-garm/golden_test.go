package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
	"github.com/garm-dev/garm/protoc-gen-garm/internal/plugin"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/types/pluginpb"
)

var update = flag.Bool("update", false, "rewrite the want/ folders of the golden cases")

// A golden case is a folder under testdata/: its *.proto files, an optional
// `params` file with protoc-gen-garm's parameters, and want/ with exactly the
// files protoc-gen-go and protoc-gen-garm write for them, plus
// want/diagnostics.txt with the warnings it printed when there were any — or,
// when the plugin refuses, want/refusal.txt with what it printed and returned
// and nothing else, because a refusal writes no file.
func TestGoldenCases(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			got := generateCase(t, dir)
			want := filepath.Join(dir, "want")
			if *update {
				writeWant(t, want, got)
				return
			}
			compareWant(t, want, got)
		})
	}
}

// generateCase runs protoc-gen-go and protoc-gen-garm over a case's files and
// returns what they would write, by path.
func generateCase(t *testing.T, dir string) map[string]string {
	t.Helper()
	params := "paths=source_relative"
	if extra, err := os.ReadFile(filepath.Join(dir, "params")); err == nil {
		params += "," + strings.TrimSpace(string(extra))
	}
	files := fixture.Compile(t, nil, []string{dir}, fixture.ProtoFiles(t, dir)...)

	garm, diagnostics := runGarm(t, fixture.Request(t, params, files))
	if garm.Error != nil {
		return map[string]string{"refusal.txt": *garm.Error + "\n"}
	}
	out := map[string]string{}
	if diagnostics != "" {
		out["diagnostics.txt"] = diagnostics
	}
	for _, f := range runGo(t, fixture.Request(t, "paths=source_relative", files)).File {
		out[f.GetName()] = f.GetContent()
	}
	for _, f := range garm.File {
		out[f.GetName()] = f.GetContent()
	}
	return out
}

// runGarm runs the plugin as its main does and returns its response and
// what it printed; on a refusal, what it printed is in the response's error
// so the golden shows everything.
func runGarm(t *testing.T, req *pluginpb.CodeGeneratorRequest) (*pluginpb.CodeGeneratorResponse, string) {
	t.Helper()
	params := plugin.DefaultParams()
	gen, err := protogen.Options{ParamFunc: params.Set}.New(req)
	if err != nil {
		msg := err.Error()
		return &pluginpb.CodeGeneratorResponse{Error: &msg}, ""
	}
	var diagnostics bytes.Buffer
	if err := plugin.Run(gen, params, &diagnostics); err != nil {
		msg := diagnostics.String() + err.Error()
		return &pluginpb.CodeGeneratorResponse{Error: &msg}, ""
	}
	return gen.Response(), diagnostics.String()
}

// runGo runs protoc-gen-go at the version go.mod pins. The one `make tools`
// builds in tools/go.mod's graph writes the same code under another version
// line in its header (decision 0075).
func runGo(t *testing.T, req *pluginpb.CodeGeneratorRequest) *pluginpb.CodeGeneratorResponse {
	t.Helper()
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	gen.SupportedFeatures = gengo.SupportedFeatures
	for _, f := range gen.Files {
		if f.Generate {
			gengo.GenerateFile(gen, f)
		}
	}
	resp := gen.Response()
	if resp.Error != nil {
		t.Fatalf("protoc-gen-go: %s", resp.GetError())
	}
	return resp
}

func writeWant(t *testing.T, want string, got map[string]string) {
	t.Helper()
	if err := os.RemoveAll(want); err != nil {
		t.Fatal(err)
	}
	for name, content := range got {
		path := filepath.Join(want, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func compareWant(t *testing.T, want string, got map[string]string) {
	t.Helper()
	var wantNames []string
	err := filepath.WalkDir(want, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, path)
		wantNames = append(wantNames, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s (run with -update to create it): %v", want, err)
	}
	gotNames := make([]string, 0, len(got))
	for name := range got {
		gotNames = append(gotNames, name)
	}
	slices.Sort(wantNames)
	slices.Sort(gotNames)
	if !slices.Equal(gotNames, wantNames) {
		t.Errorf("files written = %q, want %q", gotNames, wantNames)
	}
	for _, name := range wantNames {
		content, ok := got[name]
		if !ok {
			continue
		}
		wantContent, err := os.ReadFile(filepath.Join(want, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if content != string(wantContent) {
			t.Errorf("%s differs from the golden (go test ./protoc-gen-garm/... -update rewrites it):\n%s",
				name, firstDifference(string(wantContent), content))
		}
	}
}

// firstDifference shows the first line where two texts part.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g
		}
	}
	return "(trailing difference)"
}
