package diff

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffCase is one testdata/<name>.txt, read; cases_test.go describes the
// format.
type diffCase struct {
	name     string
	path     string
	old, new []edit
	want     string
	// wantAt is where the want section's lines start in the file: -update
	// keeps everything before it.
	wantAt int
}

// edit is one find/replace pair of a side.
type edit struct{ find, replace string }

// parseCase reads a case file. Sections come in a fixed order, old pairs,
// new pairs, then want, so each file reads the same way.
func parseCase(name, data string) (*diffCase, error) {
	c := &diffCase{name: name}
	var (
		section string // the marker being read; "" before the first
		body    strings.Builder
		find    string // a find waiting for its replace
		stage   int    // 0 while old pairs may come, 1 once new pairs have
		at      int    // bytes read so far
	)
	stages := map[string]int{"old": 0, "new": 1}
	// closeSection files the body read under the current marker.
	closeSection := func() error {
		side, kind, _ := strings.Cut(section, ": ")
		switch {
		case section == "":
		case kind == "find":
			if body.Len() == 0 {
				return fmt.Errorf("%s: find is empty", side)
			}
			find = body.String()
		case kind == "replace":
			e := edit{find: find, replace: body.String()}
			if side == "old" {
				c.old = append(c.old, e)
			} else {
				c.new = append(c.new, e)
			}
			find = ""
		}
		body.Reset()
		return nil
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		at += len(line)
		if section == "want" {
			continue
		}
		marker, ok := markerOf(line)
		if !ok {
			if section == "" && !strings.HasPrefix(line, "#") && line != "" {
				return nil, fmt.Errorf("%q before the first section: only # comment lines may stand there", line)
			}
			body.WriteString(line)
			continue
		}
		if section == "" && body.Len() == 0 {
			return nil, errors.New("no # comment saying what the case proves")
		}
		if err := closeSection(); err != nil {
			return nil, err
		}
		side, kind, _ := strings.Cut(marker, ": ")
		switch {
		case strings.HasSuffix(section, ": find") && marker != strings.TrimSuffix(section, "find")+"replace":
			return nil, fmt.Errorf("-- %s -- is followed by its replace, not -- %s --", section, marker)
		case kind == "replace" && !strings.HasSuffix(section, ": find"):
			return nil, fmt.Errorf("-- %s -- follows its find", marker)
		case marker == "want":
			c.wantAt = at
			c.want = data[at:]
		case kind != "find" && kind != "replace" || side != "old" && side != "new":
			return nil, fmt.Errorf("-- %s --: a section is old: find, old: replace, new: find, new: replace or want", marker)
		case stages[side] < stage:
			return nil, fmt.Errorf("-- %s --: old pairs come first, then new pairs, then want", marker)
		default:
			stage = stages[side]
		}
		section = marker
	}
	if section != "want" {
		return nil, errors.New("no -- want -- section (an empty one means no change)")
	}
	return c, nil
}

// markerOf reads a section marker, "-- name --".
func markerOf(line string) (string, bool) {
	line = strings.TrimSuffix(line, "\n")
	name, ok := strings.CutPrefix(line, "-- ")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(name, " --")
}

// apply makes one side from the base. A find that is missing or stands
// twice would build some other contract than the case means, so it is an
// error rather than a guess.
func apply(base string, edits []edit) (string, error) {
	text := base
	for i, e := range edits {
		if n := strings.Count(text, e.find); n != 1 {
			return "", fmt.Errorf("find #%d stands %d times, want exactly once:\n%s", i+1, n, e.find)
		}
		text = strings.Replace(text, e.find, e.replace, 1)
	}
	return text, nil
}

// loadCases reads every case under testdata/.
func loadCases(t *testing.T) []*diffCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases under testdata/: %v", err)
	}
	cases := make([]*diffCase, len(paths))
	for i, path := range paths {
		cases[i] = loadCase(t, strings.TrimSuffix(filepath.Base(path), ".txt"))
	}
	return cases
}

// loadCase reads testdata/<name>.txt.
func loadCase(t *testing.T, name string) *diffCase {
	t.Helper()
	path := filepath.Join("testdata", name+".txt")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCase(name, string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c.path = path
	return c
}

// sides makes the case's old and new contracts from the base.
func (c *diffCase) sides(t *testing.T) (old, new string) {
	t.Helper()
	data, err := os.ReadFile(baseContract)
	if err != nil {
		t.Fatal(err)
	}
	side := func(name string, edits []edit) string {
		text, err := apply(string(data), edits)
		if err != nil {
			t.Fatalf("%s: %s side: %v", c.path, name, err)
		}
		return text
	}
	return side("old", c.old), side("new", c.new)
}

func TestAFindThatIsNotThereExactlyOnceIsRefused(t *testing.T) {
	base := "a\nb\na\n"
	for _, find := range []string{"c\n", "a\n"} {
		if _, err := apply(base, []edit{{find: find, replace: "x\n"}}); err == nil {
			t.Errorf("apply found %q in %q exactly once", find, base)
		}
	}
	got, err := apply(base, []edit{{find: "b\n", replace: "c\n"}, {find: "c\na\n", replace: ""}})
	if err != nil || got != "a\n" {
		t.Errorf("apply = %q, %v; want %q: each find reads the text the edits before it left", got, err, "a\n")
	}
}

func TestAMalformedCaseFileIsRefused(t *testing.T) {
	for name, data := range map[string]string{
		"no comment":          "-- want --\n",
		"no want":             "# x\n-- new: find --\na\n-- new: replace --\nb\n",
		"find without pair":   "# x\n-- new: find --\na\n-- want --\n",
		"replace alone":       "# x\n-- new: replace --\nb\n-- want --\n",
		"empty find":          "# x\n-- new: find --\n-- new: replace --\nb\n-- want --\n",
		"old after new":       "# x\n-- new: find --\na\n-- new: replace --\nb\n-- old: find --\na\n-- old: replace --\nb\n-- want --\n",
		"unknown section":     "# x\n-- middle: find --\na\n-- middle: replace --\nb\n-- want --\n",
		"text before markers": "# x\nsyntax\n-- want --\n",
		"pair across sides":   "# x\n-- old: find --\na\n-- new: replace --\nb\n-- want --\n",
	} {
		if _, err := parseCase(name, data); err == nil {
			t.Errorf("%s: parseCase accepted\n%s", name, data)
		}
	}
}
