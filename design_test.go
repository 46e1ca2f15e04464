package garm_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// designDoc is garm's design, the document code comments cite by section.
const designDoc = "docs/design.md"

// ruleLiteral is how the lint gate names a rule in code: "L3" in
// protoc-gen-garm/compile, "M1" in the catalogue builder.
var ruleLiteral = regexp.MustCompile(`"([LM][0-9]+)"`)

// codedRules lists the rule ids the lint gate's code reports: every
// "L<n>" or "M<n>" string literal outside tests under the generator and
// the catalogue builder.
func codedRules(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, root := range []string{"protoc-gen-garm", "catalogue-builder"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range ruleLiteral.FindAllStringSubmatch(string(src), -1) {
				seen[m[1]] = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for id := range seen {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// lintTable reads section 4.5's table of the design: rule id → the golden
// paths its last column names.
func lintTable(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile(designDoc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n### 4.5 ")
	if start < 0 {
		t.Fatalf("%s has no section 4.5", designDoc)
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	row := regexp.MustCompile(`^\| ([LM][0-9]+) \|`)
	path := regexp.MustCompile("`([^`]+)`")
	table := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("%s lists %s twice", designDoc, m[1])
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(line), "|"), "|")
		golden := cells[len(cells)-1]
		table[m[1]] = nil
		for _, p := range path.FindAllStringSubmatch(golden, -1) {
			table[m[1]] = append(table[m[1]], p[1])
		}
	}
	return table
}

// pins reports whether the file or folder at path holds the diagnostic of
// rule, printed as "<severity>: <rule>: ".
func pins(t *testing.T, path, rule string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = strings.Contains(string(b), ": "+rule+": ")
		return nil
	})
	if err != nil {
		t.Errorf("%s names %s as %s's golden: %v", designDoc, path, rule, err)
		return true
	}
	return found
}

func TestTheLintTableNamesEveryRuleAndItsGolden(t *testing.T) {
	t.Parallel()
	coded, table := codedRules(t), lintTable(t)
	if len(coded) == 0 || len(table) == 0 {
		t.Fatalf("found %d rules in code and %d in %s's table: the test reads neither any more", len(coded), len(table), designDoc)
	}
	for _, id := range coded {
		if _, ok := table[id]; !ok {
			t.Errorf("lint rule %s is reported by the code and missing from %s section 4.5: add its row, what it refuses and its golden", id, designDoc)
		}
	}
	for id, goldens := range table {
		if !slices.Contains(coded, id) {
			t.Errorf("%s section 4.5 lists %s, which no code reports", designDoc, id)
		}
		if len(goldens) == 0 {
			t.Errorf("%s section 4.5 names no golden for %s", designDoc, id)
		}
		for _, g := range goldens {
			if !pins(t, filepath.FromSlash(g), id) {
				t.Errorf("%s names %s as %s's golden, and nothing there pins an %s diagnostic", designDoc, g, id, id)
			}
		}
	}
}

// specCitation is a citation of the specification garm was first built
// to, a document users of the repository cannot open; its sections are
// docs/design.md's, cited as "design 7.4".
var specCitation = regexp.MustCompile(`\bSPEC\b`)

func TestNoSourceCitesTheSpecInsteadOfTheDesign(t *testing.T) {
	t.Parallel()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".tmp", "node_modules", "third_party":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".proto") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		for i, line := range strings.Split(string(src), "\n") {
			if specCitation.MatchString(line) {
				t.Errorf("%s:%d cites the specification garm was first built to: cite %s by section instead (design 7.4)", path, i+1, designDoc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Go or proto file was checked")
	}
}
