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

func TestTheScaffoldPinsTheGeneratorVersionsTheMakefilePins(t *testing.T) {
	makefile, err := os.ReadFile(repoFile("Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{"BUF_VERSION": scaffoldBufVersion, "PROTOC_GEN_GO_VERSION": scaffoldProtobufVersion} {
		m := regexp.MustCompile(`(?m)^` + variable + `\s*:=\s*(\S+)`).FindSubmatch(makefile)
		if m == nil || string(m[1]) != want {
			t.Errorf("the Makefile's %s is %q; the scaffold pins %s", variable, m, want)
		}
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
