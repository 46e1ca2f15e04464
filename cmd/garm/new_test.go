package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/devkit/idp"
)

func TestTheScaffoldsProtoLintsCleanAndDeclaresAReadAndAWriteTool(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hr")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir, "--module", "example.com/hr"}, &out, &out); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	c, err := builder.FromManifest(t.Context(), filepath.Join(dir, "catalogue.yaml"))
	if err != nil {
		t.Fatalf("the scaffold's catalogue does not build: %v", err)
	}
	verbs := map[string]string{}
	for _, tool := range c.Artifact.Tools() {
		verbs[tool.FQN] = tool.Policy.GetVerb().String()
	}
	if verbs["hr.v1.get_employee"] != "VERB_READ" || verbs["hr.v1.update_title"] != "VERB_WRITE" {
		t.Errorf("the tools are %v", verbs)
	}
	if _, err := idp.LoadPersonas(filepath.Join(dir, "personas.yaml")); err != nil {
		t.Errorf("the scaffold's personas do not load: %v", err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"github.com/bufbuild/buf/cmd/buf", "github.com/garm-dev/garm/protoc-gen-garm", "google.golang.org/protobuf/cmd/protoc-gen-go"} {
		if !strings.Contains(string(gomod), "\t"+tool+"\n") {
			t.Errorf("go.mod pins no tool %s:\n%s", tool, gomod)
		}
	}
	for _, f := range []string{"third_party/garm/tool/v1/tool.proto", "third_party/buf/validate/validate.proto", "README.md", "buf.yaml", "buf.gen.yaml", "handler_test.go", "main.go"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the scaffold lacks %s: %v", f, err)
		}
	}
}

// TestTheScaffoldPinsTheGeneratorsOfTheToolsModule holds a scaffold's
// go.mod to tools/go.mod, which builds this repository's generators: the
// same tools, buf at the same version, protobuf as this module requires it,
// and the protoc-gen-go header garm new stamps is the one on this
// repository's own generated code.
func TestTheScaffoldPinsTheGeneratorsOfTheToolsModule(t *testing.T) {
	tools, err := os.ReadFile(repoFile("tools", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.ReadFile(repoFile("go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile(repoFile("gen", "garm", "tool", "v1", "tool.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		in   []byte
		want string
	}{
		{"tools/go.mod's buf", tools, "\tgithub.com/bufbuild/buf " + scaffoldBufVersion + " "},
		{"go.mod's protobuf", root, "\tgoogle.golang.org/protobuf " + scaffoldProtobufVersion + "\n"},
		{"gen/'s protoc-gen-go header", header, "\n// \tprotoc-gen-go " + scaffoldProtocGenGo + "\n"},
	} {
		if !bytes.Contains(c.in, []byte(c.want)) {
			t.Errorf("%s is not %q", c.what, c.want)
		}
	}
	dir := filepath.Join(t.TempDir(), "hr")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir}, &out, &out); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	toolBlock := regexp.MustCompile(`(?s)\ntool \(\n.*?\n\)\n`)
	if got, want := toolBlock.Find(gomod), toolBlock.Find(tools); want == nil || !bytes.Equal(got, want) {
		t.Errorf("the scaffold's tools:\n%s\ntools/go.mod's:\n%s", got, want)
	}
}

func TestGarmNewRefusesANameThatIsNotAPackageNameAndANonEmptyDirectory(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "Human-Resources", "--dir", t.TempDir()}, &out, &out); code != exitUsage {
		t.Errorf("an invalid name: exit %d", code)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir}, &out, &out); code != exitFailed {
		t.Errorf("a non-empty directory: exit %d", code)
	}
}

// A module path the go command would refuse is refused before anything is
// written: it reaches go.mod and Go imports as it is.
func TestGarmNewRefusesAModulePathTheGoCommandWouldAndWritesNothing(t *testing.T) {
	t.Parallel()
	for _, module := range []string{
		"example.com/hr\"\nreplace github.com/garm-dev/garm => ../evil",
		"example.com/hr\n",
		"example.com/h r",
		"example.com/../hr",
		"/abs/hr",
		"example.com/hr/",
		"-example.com/hr",
		"example.com/hr@v1",
		"Example.com/hr",
	} {
		parent := t.TempDir()
		var out bytes.Buffer
		if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", filepath.Join(parent, "hr"), "--module", module}, &out, &out); code != exitUsage {
			t.Errorf("--module %q: exit %d:\n%s", module, code, out.String())
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("--module %q: the refusal left %v", module, entries)
		}
	}
	parent := t.TempDir()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", filepath.Join(parent, "hr"), "--replace", "/src/garm\nrequire evil v1.0.0"}, &out, &out); code != exitUsage {
		t.Errorf("a --replace holding a newline: exit %d:\n%s", code, out.String())
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a --replace holding a newline: the refusal left %v", entries)
	}
}

// The scaffold is written beside its directory and renamed into place only
// once whole: a failure half-way (here, generating its code) leaves no
// directory and no temporary one.
func TestGarmNewLeavesNothingHalfWrittenWhenItFails(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the proto compiler stops at once, after every template is written
	var out bytes.Buffer
	if code := run(ctx, []string{"new", "toolservice", "hr", "--dir", filepath.Join(parent, "hr")}, &out, &out); code != exitFailed {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the failure left %v", entries)
	}
	// An empty directory named as the target stays as it was.
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if code := run(ctx, []string{"new", "toolservice", "hr", "--dir", empty}, &out, &out); code != exitFailed {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("the failure left %v", entries)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the failure wrote %v into the empty directory", entries)
	}
}

// A scaffold written into an empty directory that exists replaces it, and
// reads like one written where nothing was.
func TestGarmNewFillsAnEmptyDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	if code := run(context.Background(), []string{"new", "toolservice", "hr", "--dir", dir}, &out, &out); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	for _, f := range []string{"go.mod", "gen/hr/v1/hr.pb.go", "third_party/garm/tool/v1/tool.proto"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the scaffold lacks %s: %v", f, err)
		}
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("the scaffold's directory: %v, %v", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the scaffold: %v", entries)
	}
}
