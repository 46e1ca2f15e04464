package natsperm_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/builder"
	"github.com/garm-dev/garm/catalogue-builder/natsperm"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const (
	bankManifest   = "../../examples/bank/catalogue.yaml"
	calculatorRoot = "../../examples/calculator/proto"
)

// digestPlaceholder stands for the catalogue's digest in the goldens: the
// goldens pin the subjects, and an unrelated change to an example's
// documentation must not break them.
const digestPlaceholder = "sha256:<digest>"

func build(t *testing.T, manifest string) *builder.Catalogue {
	t.Helper()
	c, err := builder.FromManifest(context.Background(), manifest)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func buildRoots(t *testing.T, roots ...string) *builder.Catalogue {
	t.Helper()
	c, err := builder.FromRoots(context.Background(), roots...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./catalogue-builder/natsperm -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the derived permissions (go test ./catalogue-builder/natsperm -update rewrites it):\n%s", path, got)
	}
}

func TestTheBankPermissionsAreTheGoldenOnesInBothForms(t *testing.T) {
	c := build(t, bankManifest)
	set := natsperm.Derive(c.Artifact)
	for _, form := range []struct {
		file  string
		write func(*bytes.Buffer) error
	}{
		{"bank.conf", func(b *bytes.Buffer) error { return natsperm.WriteConf(b, set) }},
		{"bank.json", func(b *bytes.Buffer) error { return natsperm.WriteJSON(b, set) }},
	} {
		t.Run(form.file, func(t *testing.T) {
			var b bytes.Buffer
			if err := form.write(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), c.Artifact.Digest) {
				t.Fatalf("the output does not name the catalogue's digest %s", c.Artifact.Digest)
			}
			compareGolden(t, form.file, []byte(strings.ReplaceAll(b.String(), c.Artifact.Digest, digestPlaceholder)))
		})
	}
}

func TestTheSameCatalogueGivesTheSameBytes(t *testing.T) {
	first, second := build(t, bankManifest), build(t, bankManifest)
	var a, b bytes.Buffer
	if err := natsperm.WriteConf(&a, natsperm.Derive(first.Artifact)); err != nil {
		t.Fatal(err)
	}
	if err := natsperm.WriteConf(&b, natsperm.Derive(second.Artifact)); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("two derivations of one catalogue differ:\n%s\n----\n%s", a.String(), b.String())
	}
}

// TestANewToolIsANewLineForGarmdAndForItsPackage adds a tool to a copy of
// the calculator and diffs the two configuration blocks: the only lines
// that change are the digest's, and the new tool's subject appears once
// for garmd and once, with its queue group, for the calculator's services.
func TestANewToolIsANewLineForGarmdAndForItsPackage(t *testing.T) {
	before := buildRoots(t, calculatorRoot)
	root := copyTree(t, calculatorRoot)
	protoPath := filepath.Join(root, "calc", "v1", "calc.proto")
	src, err := os.ReadFile(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "  rpc Add(AddRequest) returns (AddResponse) {"
	if !bytes.Contains(src, []byte(anchor)) {
		t.Fatalf("%s no longer declares %q; update this test", protoPath, anchor)
	}
	multiply := "  rpc Multiply(AddRequest) returns (AddResponse) {\n" +
		"    option (garm.tool.v1.tool) = {\n" +
		"      description: \"Returns the product of two numbers.\"\n" +
		"      verb: VERB_READ\n" +
		"      min_clearance: CLEARANCE_PUBLIC\n" +
		"      effects: {idempotent: true, reversibility: REVERSIBILITY_FULL}\n" +
		"    };\n" +
		"  }\n\n"
	src = bytes.Replace(src, []byte(anchor), []byte(multiply+anchor), 1)
	if err := os.Chmod(protoPath, 0o644); err != nil { // the copy keeps the source's mode
		t.Fatal(err)
	}
	if err := os.WriteFile(protoPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	after := buildRoots(t, root)

	old, updated := confLines(t, before), confLines(t, after)
	removed, added := lineDiff(old, updated)
	wantRemoved := []string{"#   " + before.Artifact.Digest}
	wantAdded := []string{
		"#   " + after.Artifact.Digest,
		`"calc.v1.Calculator.Multiply"`,
		`"calc.v1.Calculator.Multiply calc.v1.Calculator"`,
	}
	if strings.Join(removed, "\n") != strings.Join(wantRemoved, "\n") || strings.Join(added, "\n") != strings.Join(wantAdded, "\n") {
		t.Fatalf("adding a tool removed %q and added %q; want removed %q and added %q", removed, added, wantRemoved, wantAdded)
	}
}

func confLines(t *testing.T, c *builder.Catalogue) []string {
	t.Helper()
	var b bytes.Buffer
	if err := natsperm.WriteConf(&b, natsperm.Derive(c.Artifact)); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// lineDiff is the lines only in old and the lines only in updated, each in
// order, by a longest common subsequence, trimmed of indentation.
func lineDiff(old, updated []string) (removed, added []string) {
	n, m := len(old), len(updated)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if old[i] == updated[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && old[i] == updated[j]:
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			added = append(added, strings.TrimSpace(updated[j]))
			j++
		default:
			removed = append(removed, strings.TrimSpace(old[i]))
			i++
		}
	}
	return removed, added
}

// copyTree copies the directory at src into a fresh temporary directory
// and answers the copy's path.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}
