package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree creates files under a fresh directory (a name ending in "/" is a
// directory) and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLoadReadsAManifestWhoseIncludesExist(t *testing.T) {
	root := writeTree(t, map[string]string{
		"catalogue.yaml": "schema: v1\nname: calculator\ninclude: [proto]\n",
		"proto/":         "",
	})
	path := filepath.Join(root, "catalogue.yaml")
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != path || m.Dir != root || m.Name != "calculator" || m.Include[0].Abs != filepath.Join(root, "proto") {
		t.Errorf("Load = %+v", m)
	}
}

func TestLoadReportsAMissingIncludeDirectory(t *testing.T) {
	root := writeTree(t, map[string]string{
		"catalogue.yaml": "schema: v1\ninclude:\n  - proto\n  - ~/protos\n",
	})
	path := filepath.Join(root, "catalogue.yaml")
	_, err := Load(path)
	want := path + ":3:5: include \"proto\": no such directory (" + filepath.Join(root, "proto") + ")\n" +
		path + ":4:5: include \"~/protos\": no such directory (" + filepath.Join(root, "~", "protos") + `); "~" is not expanded`
	if err == nil || err.Error() != want {
		t.Errorf("Load error:\n%v\nwant:\n%s", err, want)
	}
}

func TestLoadReportsAnIncludeThatIsAFile(t *testing.T) {
	root := writeTree(t, map[string]string{
		"catalogue.yaml":   "schema: v1\ninclude: [proto/calc.proto, proto/calc.proto/v1]\n",
		"proto/calc.proto": "syntax = \"proto3\";\n",
	})
	path := filepath.Join(root, "catalogue.yaml")
	_, err := Load(path)
	file := filepath.Join(root, "proto", "calc.proto")
	want := path + ":2:11: include \"proto/calc.proto\": not a directory (" + file + ")\n" +
		path + ":2:29: include \"proto/calc.proto/v1\": no such directory (" + filepath.Join(file, "v1") + ")"
	if err == nil || err.Error() != want {
		t.Errorf("Load error:\n%v\nwant:\n%s", err, want)
	}
}

func TestLoadReportsContentAndDirectoryProblemsTogether(t *testing.T) {
	root := writeTree(t, map[string]string{
		"catalogue.yaml": "schema: v2\ninclude: [proto, missing]\n",
		"proto/":         "",
	})
	path := filepath.Join(root, "catalogue.yaml")
	_, err := Load(path)
	want := path + `:1:9: unsupported schema "v2": this garm-catalogue reads v1` + "\n" +
		path + ":2:18: include \"missing\": no such directory (" + filepath.Join(root, "missing") + ")"
	if err == nil || err.Error() != want {
		t.Errorf("Load error:\n%v\nwant:\n%s", err, want)
	}
}

func TestLoadResolvesIncludesFromAnyWorkingDirectory(t *testing.T) {
	root := writeTree(t, map[string]string{
		"cat/catalogue.yaml": "schema: v1\ninclude: [proto]\n",
		"cat/proto/":         "",
		"elsewhere/":         "",
	})
	t.Chdir(filepath.Join(root, "elsewhere"))
	m, err := Load(filepath.Join("..", "cat", "catalogue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "cat", "proto"); m.Include[0].Abs != want {
		t.Errorf("include resolved to %q, want %q", m.Include[0].Abs, want)
	}
}

func TestLoadReturnsTheReadErrorForAMissingManifest(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "catalogue.yaml"))
	var problems Problems
	if !errors.Is(err, fs.ErrNotExist) || errors.As(err, &problems) {
		t.Errorf("Load of a missing file = %v, want the os error, not Problems", err)
	}
}
