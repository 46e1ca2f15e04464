package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/garm-dev/garm/catalogue-builder/signature"
)

// TestTheOperatorsSigningRecipeRunsAsWritten runs every block of
// docs/operators.md marked `catalogue signing`, in order, in one directory
// holding the calculator's catalogue.yaml: each line is a garm catalogue
// command run as written, and the pair it ends with verifies against the
// key set it made with two signers.
func TestTheOperatorsSigningRecipeRunsAsWritten(t *testing.T) {
	doc := repoFile("docs", "operators.md")
	var lines []string
	for _, b := range docTests(t, doc) {
		if b.kind != "catalogue" || b.args != "signing" {
			continue
		}
		lines = append(lines, strings.Split(strings.TrimSpace(b.body), "\n")...)
	}
	if len(lines) < 6 {
		t.Fatalf("%s: %d signing commands; the recipe's blocks are not all marked", doc, len(lines))
	}
	dir := t.TempDir()
	manifest, err := os.ReadFile(repoFile("examples", "calculator", "catalogue.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.yaml"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "proto"), os.DirFS(repoFile("examples", "calculator", "proto"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, line := range lines {
		args, ok := strings.CutPrefix(line, "garm ")
		if !ok {
			t.Fatalf("%s: %q is not a garm command", doc, line)
		}
		var out bytes.Buffer
		if code := run(context.Background(), strings.Fields(args), &out, &out); code != exitOK {
			t.Fatalf("%s: %s: exit %d:\n%s", doc, line, code, out.String())
		}
	}
	keys, err := signature.ParseKeySet(mustRead(t, "catalogue-keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := signature.ReadPair(context.Background(), fileFetch("calculator.binpb.sig"), fileFetch("calculator.binpb"), keys)
	if err != nil {
		t.Fatal(err)
	}
	if err := (signature.Policy{MinSigners: 2, MinPerGroup: map[string]int{"owners": 1, "security": 1}}).Check(pair.Verified); err != nil {
		t.Fatalf("the recipe's catalogue: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func fileFetch(path string) signature.Fetch {
	return func(context.Context) ([]byte, error) { return os.ReadFile(path) }
}
