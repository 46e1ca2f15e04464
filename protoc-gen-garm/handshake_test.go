package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/protoc-gen-garm/internal/fixture"
)

// Generated bindings and the toolbind they compile against must agree. These
// cases build a golden package against a toolbind whose handshake constant is
// changed (with go build -overlay, so nothing on disk moves) and read what the
// compiler says.
func TestAMismatchedRuntimeFailsToCompileSayingWhatToDo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to compile generated code: %v", err)
	}
	root := fixture.RepoRoot()
	versionFile := filepath.Join(root, "runtime", "toolbind", "version.go")
	tests := []struct {
		name    string
		version string
		want    string
	}{
		{
			name:    "a runtime older than the generated code",
			version: "package toolbind\n\ntype GeneratedCodeVersion int\n",
			want:    "undefined: toolbind.SupportPackageIsVersion1",
		},
		{
			name: "a runtime that retired the generated code's version",
			version: "package toolbind\n\ntype GeneratedCodeVersion int\n\n" +
				"const SupportPackageIsVersion1 = \"regenerate with protoc-gen-garm v2 or newer\"\n",
			want: `untyped string constant "regenerate with protoc-gen-garm v2 or newer"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			replacement := filepath.Join(dir, "version.go")
			if err := os.WriteFile(replacement, []byte(tt.version), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {versionFile: replacement}})
			overlayFile := filepath.Join(dir, "overlay.json")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(goBin, "build", "-overlay", overlayFile, "./protoc-gen-garm/testdata/minimal/want")
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("generated code compiled against a mismatched toolbind")
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("compiler said:\n%s\nwant it to mention %q", out, tt.want)
			}
		})
	}
	cmd := exec.Command(goBin, "build", "./protoc-gen-garm/testdata/minimal/want")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the matching pair does not compile: %v\n%s", err, out)
	}
}
